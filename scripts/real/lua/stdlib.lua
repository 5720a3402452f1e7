-- Driver for the Lua 5.4 interpreter built from Debian's lua5.4 source:
-- touches every standard library through the C API, where each library
-- function is an indirect call through a lua_CFunction pointer, plus
-- metamethods, coroutines, errors and the allocator/reader/writer hooks.
-- Prints deterministic results only.
local out = {}
local function p(...)
	local t = table.pack(...)
	for k = 1, t.n do t[k] = tostring(t[k]) end
	out[#out + 1] = table.concat(t, " ", 1, t.n)
end

-- string library: gsub with function/table/pattern replacement, format
local s = ("the quick brown fox jumps over the lazy dog"):gsub("%w+", function(w)
	return w:sub(1, 1):upper() .. w:sub(2) end)
p(s)
p(("hello world"):gsub("o", { o = "0" }), ("abc"):rep(3, "-"), ("%5.2f|%-5d|%x|%q"):format(3.14159, 42, 255, "a\nb"))
for k, v in string.gmatch("a=1, b=2, c=3", "(%w+)=(%w+)") do p(k, v) end
p(string.pack("<i4d", 7, 1.5):byte(1, -1))
p(string.unpack("<i4", string.pack("<i4", -2)))
p(utf8.char(72, 228, 8364, 128512), utf8.len("häll€"))

-- table library with a Lua comparator called back from C (sort)
local t = {}
for i = 1, 200 do t[i] = (i * 7919) % 1009 end
table.sort(t, function(a, b) return a > b end)
p(t[1], t[100], t[200], table.concat(t, ",", 1, 10))
table.insert(t, 1, -1); table.remove(t, 2); p(#t, t[1], t[2])
p(table.unpack(table.move({ 1, 2, 3, 4, 5 }, 2, 4, 1)))

-- metatables: arithmetic, comparison, index, call, close, gc
local V = {}
V.__index = V
V.__add = function(a, b) return setmetatable({ x = a.x + b.x }, V) end
V.__lt = function(a, b) return a.x < b.x end
V.__call = function(self, y) return self.x * y end
V.__tostring = function(self) return "V(" .. self.x .. ")" end
V.__len = function(self) return self.x end
local a, b = setmetatable({ x = 2 }, V), setmetatable({ x = 5 }, V)
p(tostring(a + b), a < b, a(21), #b)
local closed = {}
do
	local c <close> = setmetatable({}, { __close = function() closed[#closed + 1] = "closed" end })
end
p(closed[1])
local gced = 0
for i = 1, 100 do setmetatable({}, { __gc = function() gced = gced + 1 end }) end
collectgarbage(); collectgarbage()
p("gc", gced)
local weak = setmetatable({}, { __mode = "k" })
weak[{}] = 1; collectgarbage(); p("weak", next(weak))

-- coroutines (resume/yield cross the C boundary), wrap, close
local gen = coroutine.wrap(function(n) for i = 1, n do coroutine.yield(i * i) end return "done" end)
p(gen(4), gen(), gen(), gen(), gen())
local co = coroutine.create(function() error({ code = 7 }) end)
local ok, e = coroutine.resume(co); p(ok, type(e), e.code, coroutine.status(co))

-- errors: pcall, xpcall with a message handler, error objects, tracebacks
p(pcall(error, "boom", 0))
p(xpcall(function() local x = nil; return x.y end, function(m) return "handled: " .. m:gsub("^.-:%d+: ", "") end))
p(select("#", pcall(string.rep)), (select(2, pcall(string.rep))):match("bad argument #1"))

-- load with a reader function, string.dump and reload (lua_Writer/lua_Reader)
local parts, i = { "return ", "function(x) ", "return x * 3 ", "end" }, 0
local f = load(function() i = i + 1; return parts[i] end)()
p(f(14))
local dumped = string.dump(function(x, y) return x .. "+" .. y end)
p(load(dumped, "d", "b")("a", "b"), #dumped > 0)
p(load("syntax error here"))

-- math, os, io through a temp file
math.randomseed(42)
local r = {}
for k = 1, 5 do r[k] = math.random(1000) end
p(table.concat(r, " "), math.floor(math.pi * 1e6), math.type(1), math.type(1.0), math.tointeger(3.0), 7 // 2, 7 % -3, 2 ^ 10)
p(os.date("!%Y-%m-%d %H:%M:%S", 86400 * 365), os.time({ year = 2000, month = 1, day = 1, hour = 12 }) ~= nil)
local name = os.tmpname()
local fh = assert(io.open(name, "w")); fh:write("line1\n", 42, "\n", 3.5, "\n"); fh:close()
local lines = {}
for l in io.lines(name) do lines[#lines + 1] = l end
fh = io.open(name); p(table.concat(lines, "|"), fh:read("l"), fh:read("n"), fh:read("n")); fh:close()
os.remove(name)

-- goto, integer/float formatting, string coercions
do local n = 0 ::top:: n = n + 1 if n < 5 then goto top end p("goto", n) end
p(10 // 3, 10.0 / 4, 1e100, -0.0, math.maxinteger, "10" + 5, 2^53 == 2^53 + 1)

-- debug library: hooks are C->Lua callbacks
local count = 0
debug.sethook(function() count = count + 1 end, "c")
for k = 1, 10 do math.abs(k) end
debug.sethook()
p("hook calls > 10:", count > 10, debug.getinfo(1, "l").currentline > 0)

-- require a module from package.preload (searcher functions run in C)
package.preload.mymod = function(n) return { name = n } end
p(require("mymod").name)

io.write(table.concat(out, "\n"), "\n")

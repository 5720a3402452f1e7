-- Workload for timing the Lua 5.4 interpreter: recursion, closures, a sort
-- with a Lua comparator (C calling back into Lua), string building and
-- pattern matching, metamethod dispatch. Prints a checksum.
local N = tonumber(arg and arg[1]) or 1
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local acc = 0
for _ = 1, N do
	acc = acc + fib(24)
	math.randomseed(7)
	local t = {}
	for i = 1, 60000 do t[i] = math.random(1, 1 << 30) end
	table.sort(t, function(a, b) return a < b end)
	acc = (acc + t[1] + t[#t] + t[30000]) % 1000000007
	local parts = {}
	for i = 1, 30000 do parts[#parts + 1] = string.format("%d:%x", i, i * 31) end
	local s = table.concat(parts, ",")
	local cnt = 0
	for a, b in s:gmatch("(%d+):(%x+)") do cnt = cnt + #b end
	acc = (acc + cnt + #s:gsub("%d", function(d) return d end)) % 1000000007
	local mt = { __add = function(x, y) return setmetatable({ v = x.v + y.v }, getmetatable(x)) end }
	local v = setmetatable({ v = 0 }, mt)
	local one = setmetatable({ v = 1 }, mt)
	for _ = 1, 100000 do v = v + one end
	acc = (acc + v.v) % 1000000007
end
print("checksum", acc)

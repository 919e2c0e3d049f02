-- exercise.lua: strings, tables, closures, coroutines, errors (error ->
-- longjmp, pcall), metatables and the garbage collector. Its output is
-- deterministic: the weave tests compare it between a plain and a woven
-- build of Lua.

-- strings
local words = {}
for w in ("the quick brown fox jumps over the lazy dog"):gmatch("%a+") do
  words[#words + 1] = w:upper()
end
print(table.concat(words, ","))
print(string.format("%5.2f|%-6s|%x|%q", math.pi, "ab", 255, "a\nb"))
print(("abc"):rep(3, "-"), ("hello world"):gsub("o", "0"))
local s = {}
for i = 1, 2000 do s[#s + 1] = tostring(i * i) end
local big = table.concat(s)
print(#big, big:sub(1, 20), big:find("1000000", 1, true))

-- tables
local t = {}
for i = 1, 10000 do t[i] = i * 2 end
for i = 1, 10000, 3 do t[i] = nil end
local n, sum = 0, 0
for _, v in pairs(t) do n = n + 1; sum = sum + v end
print("table", n, sum)
local list = {}
for i = 1, 500 do list[i] = (i * 7919) % 1009 end
table.sort(list)
print("sorted", list[1], list[250], list[500])
local map = {}
for i = 1, 3000 do map["k" .. i] = {i, tostring(i)} end
for i = 1, 3000, 2 do map["k" .. i] = nil end
local cnt = 0
for k, v in pairs(map) do cnt = cnt + v[1] end
print("map", cnt)

-- closures
local function counter()
  local c = 0
  return function(d) c = c + (d or 1); return c end
end
local c1, c2 = counter(), counter()
for i = 1, 100 do c1(); c2(i) end
print("closures", c1(), c2())
local fns = {}
for i = 1, 50 do fns[i] = function() return i * i end end
local acc = 0
for _, f in ipairs(fns) do acc = acc + f() end
print("upvalues", acc)

-- coroutines
local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i) end
    return nil
  end)
end
local total = 0
for v in gen(1000) do total = total + v end
print("coroutine", total)
local co = coroutine.create(function(a, b)
  local c = coroutine.yield(a + b)
  local d, e = coroutine.yield(c * 2)
  error("inside coroutine: " .. (d + e))
end)
print(coroutine.resume(co, 1, 2))
print(coroutine.resume(co, 10))
local ok, msg = coroutine.resume(co, 3, 4)
print(ok, (msg:gsub("^.-:%d+: ", "")))
print(coroutine.status(co))

-- errors: error() longjmps to the closest pcall
local function thrower(depth)
  if depth == 0 then error({code = 42}) end
  local tmp = {depth, tostring(depth)}
  return thrower(depth - 1) + #tmp
end
for i = 1, 200 do
  local ok, e = pcall(thrower, i % 20)
  assert(not ok and e.code == 42)
end
local okp, ep = pcall(thrower, 5)
print("pcall", okp, type(ep), ep.code)
print(select(2, pcall(error, "plain message", 0)))
print(xpcall(function() local x = nil; return x.field end,
  function(m) return "handled: " .. (m:gsub("^.-:%d+: ", "")) end))
print(pcall(string.rep))
local okc, errc = pcall(function() return ("x"):bad() end)
print(okc, (errc:gsub("^.-:%d+: ", "")))

-- metatables
local V = {}
V.__index = V
V.__add = function(a, b) return setmetatable({x = a.x + b.x, y = a.y + b.y}, V) end
V.__tostring = function(v) return "(" .. v.x .. "," .. v.y .. ")" end
local p = setmetatable({x = 1, y = 2}, V)
for i = 1, 100 do p = p + setmetatable({x = i, y = -i}, V) end
print("vector", tostring(p))

-- garbage
for i = 1, 20 do
  local junk = {}
  for j = 1, 1000 do junk[j] = {j, "s" .. j} end
end
collectgarbage()
print("gc", collectgarbage("count") > 0)
print(string.format("%.3f", 1 / 3), math.maxinteger, 7 // 2, 7 % -3, 2 ^ 10)
print("done")
io.stdout:flush()
os.exit(0) -- without closing the state: its blocks stay in use, for the leak table

-- alloc.lua: an allocation-heavy Lua workload for the benchmark harness:
-- short strings, small tables, closures, growing arrays (reallocs) and the
-- garbage collector freeing them. Usage: lua alloc.lua ROUNDS (every round
-- makes about 850 allocation calls; 10,000 rounds, 8.5 million).
local rounds = tonumber(arg and arg[1]) or 1000
local total, live = 0, {}
for r = 1, rounds do
  local t = {}
  for i = 1, 60 do
    local k = "k" .. i .. "." .. r
    t[k] = { i, k, function() return i + r end }
  end
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for i = 1, #keys, 4 do parts[#parts + 1] = keys[i]:upper() end
  local s = table.concat(parts, ",")
  total = total + #s + t[keys[1]][3]()
  live[r % 97 + 1] = t -- some tables survive a while
end
print(rounds, total)

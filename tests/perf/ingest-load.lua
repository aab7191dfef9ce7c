-- ingest-load.lua - wrk script for tests/perf/ingest-load.sh.
--
-- Mode "ingest" (default): POST /api/v1/reports with a real report whose
-- id is a fresh UUID per request: a random 8-hex-digit prefix per thread
-- and a counter.  Every id answered 201 is written to ACKED_DIR/acked-N.txt
-- so the script can check that each of them is in the database.
-- Mode "healthz": GET /healthz, the server's own ceiling.
-- Arguments after "--": MODE TEMPLATE TOKEN ACKED_DIR.
-- done() prints one line "TW_WRK key=value ..." for the shell to read.

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  table.insert(threads, thread)
end

function init(args)
  mode = args[1] or "ingest"
  acked_n, sent_n = 0, 0
  if mode ~= "ingest" then return end
  local f = assert(io.open(args[2], "rb"))
  template = f:read("*a")
  f:close()
  token = args[3]
  math.randomseed(os.time() * 1000 + tid * 7919 + math.floor(os.clock() * 1e6))
  prefix = string.format("%04x%04x", math.random(0, 0xffff), math.random(0, 0xffff))
  seq = 0
  acked = assert(io.open(args[4] .. "/acked-" .. tid .. ".txt", "w"))
  headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}
end

function request()
  if mode ~= "ingest" then
    return wrk.format("GET", "/healthz")
  end
  seq = seq + 1
  sent_n = sent_n + 1
  local id = string.format("%s-%04x-4%03x-8%03x-%012x", prefix, tid % 0x10000,
                           math.floor(seq / 4096) % 4096, seq % 4096, seq)
  local body = template:gsub("@ID@", id, 1)
  return wrk.format("POST", "/api/v1/reports", headers, body)
end

function response(status, hdrs, body)
  if mode == "ingest" and status == 201 then
    acked_n = acked_n + 1
    local id = body:match('"id":"([0-9a-f%-]+)"')
    if id then acked:write(id, "\n") end
    if acked_n % 256 == 0 then acked:flush() end
  end
end

function done(summary, latency, requests)
  -- The acknowledged-id files are flushed when the threads' states close;
  -- count what each thread answered from its own state.
  local acked_total = 0
  for _, t in ipairs(threads) do
    acked_total = acked_total + (t:get("acked_n") or 0)
  end
  io.write(string.format(
    "TW_WRK requests=%d duration_us=%d non2xx=%d connect_err=%d read_err=%d " ..
    "write_err=%d timeouts=%d acked=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout, acked_total,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end

-- scale-out.lua - wrk script for tests/perf/scale-out.sh: the requests of
-- ingest-load.lua (loaded here, not copied), each report made the report of
-- one of VMS VMs per wrk thread rather than all of one VM, so that backends
-- on one PostgreSQL database do not all queue on one VM's row.
-- The VM's name "sap-app-02" (in its name, resource id, hostname and disks)
-- becomes a name of the same 10 characters, 4 hex digits of the thread and
-- 6 of the VM's number, so the request's Content-Length stays right.
-- Arguments after "--": MODE TEMPLATE TOKEN ACKED_DIR VMS.
dofile("tests/perf/ingest-load.lua")

local ingest_init, ingest_request = init, request

function init(args)
  ingest_init(args)
  vms = tonumber(args[5]) or 500
  tag = string.format("%04x", math.random(0, 0xffff))
  vm_n = 0
end

function request()
  local req = ingest_request()
  if mode ~= "ingest" then return req end
  vm_n = vm_n + 1
  local name = string.format("%s%06x", tag, vm_n % vms)
  return (req:gsub("sap%-app%-02", name))
end

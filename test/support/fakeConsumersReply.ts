import { loadScript } from "../../src/scripts/scriptedRedis.js";

/**
 * `inactive` values to put in XINFO CONSUMERS replies, by consumer name (the Redis 7.2+ shape;
 * consumers not listed get inactive = idle, as after a successful read), or "absent" for the
 * Redis 7.0 shape (no `inactive` field at all).
 */
export type FakedInactive = Readonly<Record<string, number>> | "absent";

/**
 * A script of src/scripts/lua as it runs (includes in place), except that XINFO CONSUMERS
 * (through redis.call or redis.pcall) answers in the shape of the other server versions, on
 * whatever server the suite runs: a local `redis` declared after the shebang line shadows the
 * global one for the whole script. For the pure logic of the script's version branches; everything else is real.
 */
export function scriptWithConsumersReply(file: string, inactive: FakedInactive): string {
  const source = loadScript(file);
  const faked =
    inactive === "absent"
      ? "nil"
      : `{ ${Object.entries(inactive)
          .map(([name, ms]) => `[${JSON.stringify(name)}] = ${ms}`)
          .join(", ")} }`;
  const shim = `
local realRedis = redis
local fakedInactive = ${faked}
local function reshape(reply)
  for _, consumer in ipairs(reply) do
    local at = {}
    for i = 1, #consumer, 2 do at[consumer[i]] = i end
    -- 7.2+ lists name, pending, idle, inactive: removing inactive moves nothing before it.
    if at['inactive'] then
      table.remove(consumer, at['inactive'] + 1)
      table.remove(consumer, at['inactive'])
    end
    if fakedInactive then
      local value = fakedInactive[consumer[at['name'] + 1]]
      if value == nil then value = consumer[at['idle'] + 1] end
      consumer[#consumer + 1] = 'inactive'
      consumer[#consumer + 1] = value
    end
  end
  return reply
end
local function isConsumers(command, subcommand)
  return command == 'XINFO' and subcommand == 'CONSUMERS'
end
local redis = setmetatable({
  call = function(...)
    local reply = realRedis.call(...)
    if isConsumers(...) then return reshape(reply) end
    return reply
  end,
  pcall = function(...)
    local reply = realRedis.pcall(...)
    if isConsumers(...) and not reply.err then return reshape(reply) end
    return reply
  end,
}, { __index = realRedis })
`;
  const newline = source.indexOf("\n");
  return source.slice(0, newline + 1) + shim + source.slice(newline + 1);
}

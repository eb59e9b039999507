-- The fence (src/core/fence.ts), checked before the first write. One server: the fence key is
-- the lease key, which must hold the caller's lease value. Redis Cluster (a value 'token:<n>'):
-- the fence key, in the stream's slot, holds the highest fencing token that wrote there; a lower
-- token changes nothing, a higher one is stored before the first write. Tokens are INCR results,
-- far below 2^53: comparing them as numbers is exact.
local SLOT_TOKEN_PREFIX = 'token:'

-- Returns refusal, raiseTo. refusal: nil when the caller may write, else the message of its
-- FENCED error (`newerLeaderDid` ends it when a newer token is stored: 'wrote here'). raiseTo:
-- the token to store in the fence key just before the first write, nil when there is none.
local function checkFence(key, value, newerLeaderDid)
  if string.sub(value, 1, #SLOT_TOKEN_PREFIX) == SLOT_TOKEN_PREFIX then
    local token = tonumber(string.sub(value, #SLOT_TOKEN_PREFIX + 1))
    local highest = tonumber(redis.call('GET', key) or '0') or 0
    if token < highest then
      return 'a newer leader (fencing token ' .. highest .. ') ' .. newerLeaderDid, nil
    end
    if token == highest then return nil, nil end
    return nil, token
  end
  if redis.call('GET', key) ~= value then return 'the lease is not held by this process', nil end
  return nil, nil
end

-- The fence of a script that the leader runs with its fence key declared at KEYS[keyIndex] and an
-- operator command runs without it (unfenced: the operator is not a leader). Returns what
-- checkFence returns, or nil, nil when the key is not declared.
local function checkDeclaredFence(keyIndex, value, newerLeaderDid)
  if #KEYS < keyIndex then return nil, nil end
  return checkFence(KEYS[keyIndex], value, newerLeaderDid)
end

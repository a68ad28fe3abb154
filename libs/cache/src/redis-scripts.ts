/**
 * Lua run inside Redis so that read-modify-write steps are atomic across every replica. Each script touches
 * only the key it declares, so they stay valid on Redis Cluster.
 */

/**
 * KEYS[1] counter; ARGV[1] amount; ARGV[2] ttl ms (0 = none). The TTL is set only when INCRBY creates the key,
 * which a plain `INCRBY` + `PEXPIRE NX` pair could not do atomically on Redis < 7.
 */
export const INCR_BY_LUA = `
local existed = redis.call('EXISTS', KEYS[1])
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = tonumber(ARGV[2])
if existed == 0 and ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return value
`;

/** KEYS[1] counter; ARGV[1] amount. Adds only to a key that exists; nil (no key created) otherwise. */
export const INCR_IF_EXISTS_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`;

/**
 * The Redis server's clock as a window's scripts read it (`window` set first): so every replica agrees on cell
 * edges whatever its own clock says. Sets `now` (ms) and its `cell`, and reads the hash's `storedCell`.
 */
const WINDOW_CLOCK_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cell = math.floor(now / window)
local state = redis.call('HMGET', KEYS[1], 'cell', 'prev', 'cur')
local storedCell = tonumber(state[1])
`;

/**
 * ARGV[1] limit, ARGV[2] windowMs: the window's count as of now, as every script that decides on room reads it.
 * Sets `elapsed` (ms into the current cell), `prev` and `cur` (the previous and current cells' counts) and
 * `weighted`, which must stay in step with `weightedCount` in sliding-window.ts (same operands, same order), so
 * both adapters decide identically.
 */
const WINDOW_COUNT_LUA = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
${WINDOW_CLOCK_LUA}local elapsed = now - cell * window
local prev = 0
local cur = 0
if storedCell == cell then
  prev = tonumber(state[2]) or 0
  cur = tonumber(state[3]) or 0
elseif storedCell == cell - 1 then
  prev = tonumber(state[3]) or 0
end
local weighted = prev * (window - elapsed) / window + cur
`;

/**
 * KEYS[1] window hash {cell, prev, cur}; ARGV limit, windowMs, cost. Returns {allowed, previous,
 * current-before-hit, elapsedMs}; sliding-window.ts turns those into the result.
 */
export const SLIDING_WINDOW_LUA = `${WINDOW_COUNT_LUA}local cost = tonumber(ARGV[3])
local allowed = 0
if weighted + cost <= limit then
  allowed = 1
  redis.call('HSET', KEYS[1], 'cell', cell, 'prev', prev, 'cur', cur + cost)
  redis.call('PEXPIRE', KEYS[1], window * 2)
end
return {allowed, prev, cur, elapsed}
`;

/**
 * KEYS[1] window hash; ARGV windowMs, amount. `adjustWindow` in sliding-window.ts, on the server's clock: the
 * two must stay in step.
 */
export const WINDOW_ADJUST_LUA = `
local window = tonumber(ARGV[1])
local amount = tonumber(ARGV[2])
${WINDOW_CLOCK_LUA}if storedCell == nil or storedCell < cell - 1 then
  return 0
end
local prev = tonumber(state[2]) or 0
local cur = (tonumber(state[3]) or 0) + amount
if cur < 0 then
  if storedCell == cell then
    prev = math.max(0, prev + cur)
  end
  cur = 0
end
redis.call('HSET', KEYS[1], 'prev', prev, 'cur', cur)
return 1
`;

/**
 * KEYS[1] window hash; ARGV limit, windowMs, want, min, share. A lease on the window (docs/leased-limits.md): the
 * room is read as SLIDING_WINDOW_LUA reads it, the grant is `leaseGrant` in sliding-window.ts (keep in step) and
 * is counted in the current cell at once. Returns {granted, previous, current-before, elapsedMs, cell}.
 */
export const WINDOW_LEASE_LUA = `${WINDOW_COUNT_LUA}local want = tonumber(ARGV[3])
local min = tonumber(ARGV[4])
local share = tonumber(ARGV[5])
local room = math.floor(limit - weighted)
local grant = math.min(want, math.floor(room / share))
if grant < min then
  grant = 0
else
  redis.call('HSET', KEYS[1], 'cell', cell, 'prev', prev, 'cur', cur + grant)
  redis.call('PEXPIRE', KEYS[1], window * 2)
end
return {grant, prev, cur, elapsed, cell}
`;

/** KEYS[1] window hash; ARGV leaseCell, amount. `returnToWindow` in sliding-window.ts: the two must stay in step. */
export const WINDOW_RETURN_LUA = `
local leaseCell = tonumber(ARGV[1])
local amount = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'cell', 'prev', 'cur')
local storedCell = tonumber(state[1])
if storedCell == leaseCell then
  redis.call('HSET', KEYS[1], 'cur', math.max(0, (tonumber(state[3]) or 0) - amount))
elseif storedCell == leaseCell + 1 then
  redis.call('HSET', KEYS[1], 'prev', math.max(0, (tonumber(state[2]) or 0) - amount))
end
return 1
`;

/**
 * KEYS[1] counter; ARGV sign, limit, want, min, share, ttl ms (0 = none). A lease on a counter
 * (CounterLeaseOptions): the grant is `counterLeaseGrant` in shared-store.ts (keep in step). Returns {granted,
 * present}; a counting-down counter that is absent answers {0, 0} and is not created.
 */
export const COUNTER_LEASE_LUA = `
local sign = tonumber(ARGV[1])
local raw = redis.call('GET', KEYS[1])
if not raw and sign == -1 then
  return {0, 0}
end
local value = tonumber(raw or '0')
local room = value
if sign == 1 then
  room = tonumber(ARGV[2]) - value
end
local grant = math.min(tonumber(ARGV[3]), math.floor(room / tonumber(ARGV[5])))
if grant < tonumber(ARGV[4]) then
  return {0, 1}
end
redis.call('INCRBY', KEYS[1], sign * grant)
local ttl = tonumber(ARGV[6])
if not raw and ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return {grant, 1}
`;

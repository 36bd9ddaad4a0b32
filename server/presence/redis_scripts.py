"""The Lua scripts of Redis presence: each runs atomically in Redis, so an append
checks the lease (fencing) and the seq in one step, and a lobby entry and
its announcement never part (:mod:`server.presence.redis`)."""

from __future__ import annotations

import hashlib

from server.presence.redis_values import UPSERT_HEAD


class Lua:
    """A script run by ``EVALSHA`` on the lean connection (``EVAL`` when Redis lacks it)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.sha = hashlib.sha1(text.encode()).hexdigest()


def fenced_next_seq(owner: str) -> str:
    """Lua opening of the append script: 0 (refused) unless ``owner`` (an ARGV) is ''
    or the node holding the room's lease (KEYS[2]); then ``seq``, the next sequence
    number of the room's log (KEYS[1])."""
    return f"""
if {owner} ~= '' and redis.call('GET', KEYS[2]) ~= {owner} then
  return 0
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local seq = 1
if #last > 0 then
  seq = tonumber(string.match(last[1][1], '^(%d+)')) + 1
end
"""


#: the upsert event's head (UPSERT_HEAD) as a Lua string literal, byte by byte
LUA_UPSERT_HEAD = "'" + "".join(f"\\{b:03d}" for b in UPSERT_HEAD) + "'"

# The one append, a compare-and-append: the events come packed, each holding its seq
# (the room's owner numbered and encoded them, protocol/); the script only checks the
# lease and that the log's next seq is the first event's, then stores the bytes as they
# are (it never reads or rewrites msgpack).
# KEYS: log, lease, room, lobby hash, lobby channel; ARGV: owner or "" (fencing:
# with an owner, only the node holding the room's lease may append), the first event's
# expected seq, the room's settings JSON or "" (set when the appends are accepted), room
# id, lobby summary (msgpack) or "", then the events: all appended in order, or none;
# the lobby entry is set and published after them. Returns the last seq; 0: lease not
# held; -next seq: a conflict.
APPEND = (
    fenced_next_seq("ARGV[1]") + """\
if tonumber(ARGV[2]) ~= seq then
  return -seq
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[3], ARGV[3])
end
for i = 6, #ARGV do
  redis.call('XADD', KEYS[1], seq .. '-1', 'e', ARGV[i])
  seq = seq + 1
end
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[4], ARGV[5])
"""
    f"  redis.call('PUBLISH', KEYS[5], {LUA_UPSERT_HEAD} .. ARGV[5])\n"
    """end
return seq - 1
"""
)

# KEYS: lease; ARGV: node, ttl ms
ACQUIRE = """
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

# KEYS: leases; ARGV: node, ttl ms; returns the (1-based) indexes of leases not held
RENEW_MANY = """
local lost = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
  else
    lost[#lost + 1] = i
  end
end
return lost
"""

RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""

# KEYS: counter, record, record index; ARGV: game id, record JSON
PUT_RECORD = """
local n = redis.call('INCR', KEYS[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], n, ARGV[1])
return n
"""

# (the end of DROP_CLOSED_ROOM) KEYS: room, lease, log; ARGV: invite key prefix
_FORGET_ROOM = """
local raw = redis.call('GET', KEYS[1])
if raw then
  local ok, meta = pcall(cjson.decode, raw)
  if ok and type(meta) == 'table' and type(meta.invite) == 'string' and meta.invite ~= '' then
    redis.call('DEL', ARGV[1] .. meta.invite)
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
"""

# KEYS: room, lease, log, lobby, lobby channel; ARGV: invite key prefix, room id, remove
# event JSON: the lobby entry goes (published if it was there), then the room's settings,
# invite, lease (whoever holds it) and log
DROP_CLOSED_ROOM = (
    """
if redis.call('HDEL', KEYS[4], ARGV[2]) == 1 then
  redis.call('PUBLISH', KEYS[5], ARGV[3])
end
"""
    + _FORGET_ROOM
)

# KEYS: lease, room[, invite]; ARGV: node, ttl ms, settings JSON[, room id]
OPEN_ROOM = """
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
if #KEYS > 2 then redis.call('SET', KEYS[3], ARGV[4]) end
return 1
"""

# KEYS: session, token prefix; ARGV: data JSON
UPDATE_SESSION = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[1])
return 1
"""

# KEYS: sessions; ARGV: their data JSON, in the same order
UPDATE_SESSIONS = """
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then
    redis.call('HSET', key, 'd', ARGV[i])
  end
end
return 1
"""

# KEYS: session; ARGV: ttl ms, token key prefix
TOUCH_SESSION = """
local t = redis.call('HGET', KEYS[1], 't')
if not t then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', ARGV[2] .. t, ARGV[1])
return 1
"""

# KEYS: lobby hash, lobby channel; ARGV: room id, summary, upsert event (msgpack both)
LOBBY_UPSERT = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', KEYS[2], ARGV[3])
return 1
"""

# KEYS: lobby hash, lobby channel; ARGV: room id, remove event JSON
LOBBY_REMOVE = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('PUBLISH', KEYS[2], ARGV[2])
end
return 1
"""

import { historyKey, type ChaosGroup } from "./groups.js";
import { ACK_LUA, CRASH_RATE, LATE_MS, SLOW_MS, SLOW_RATE } from "./jsPrelude.js";
import { LOCAL_LOG_ENV, WAIT_MS_ENV } from "./localHistory.js";

/**
 * What runs before the README's redis-py loop: jsPrelude's recording and behaviours (healthy,
 * crashy, slow; no hot loop, no heartbeat), as wrappers on redis-py's Redis class, so that the
 * README's own calls are recorded without changing its code. Run by Debian's /usr/bin/python3.
 * On Redis Cluster, `chaos_client()` is redis-py's RedisCluster (consumerProgram.ts puts it in
 * the loop), and its class is wrapped too.
 */
export function pyPrelude(group: ChaosGroup): string {
  const g = JSON.stringify(group.group);
  const [deliveries, acks, stalls] = (["deliveries", "acks", "stalls"] as const).map((kind) =>
    JSON.stringify(historyKey(group.stream, kind)),
  );
  return `import json
import os
import random
import sys
import time

import redis as chaos_redis
import redis.cluster as chaos_redis_cluster
import redis.exceptions as chaos_exceptions


def chaos_client():
    nodes = os.environ.get("CHAOS_CLUSTER_NODES")
    if nodes is None:
        return chaos_redis.Redis.from_url(os.environ["REDIS_URL"])
    seeds = [chaos_redis_cluster.ClusterNode(n["host"], n["port"]) for n in json.loads(nodes)]
    return chaos_redis_cluster.RedisCluster(startup_nodes=seeds)


chaos_recorder = chaos_client()
chaos_consumer = os.environ.get("CONSUMER", "c1")
chaos_behaviour = os.environ.get("CHAOS_BEHAVIOUR", "healthy")
chaos_random = random.Random(int(os.environ.get("CHAOS_SEED", "1")))
chaos_held = {}  # (stream, id) -> key, delivered here and not acknowledged yet
chaos_seen_at = {}  # key -> when its latest delivery reached this process (s)
chaos_ack_lua = ${JSON.stringify(ACK_LUA)}  # by EVAL: EVALSHA is the janitor's (recovery.ts)


# The local log (localHistory.ts): what Redis answered, kept outside Redis, and WAIT's verdict.
chaos_log = os.environ.get("${LOCAL_LOG_ENV}")
chaos_wait_ms = int(os.environ.get("${WAIT_MS_ENV}", "0"))


def chaos_local(kind, records, confirmed=None, at=None):
    if not chaos_log or not records:
        return
    flag = "-" if confirmed is None else ("1" if confirmed else "0")
    at = str(int(time.time() * 1000)) if at is None else at
    with open(chaos_log, "a") as log:
        log.write("".join("\\t".join([kind, at, flag, r]) + "\\n" for r in records))


# Replies and failures after which another node takes the write (RedisCluster's routing follows).
chaos_redirected = (
    chaos_exceptions.AskError,  # MOVED too
    chaos_exceptions.TryAgainError,
    chaos_exceptions.ClusterDownError,
    chaos_exceptions.ConnectionError,
    chaos_exceptions.TimeoutError,
    chaos_exceptions.RedisClusterException,
)


def chaos_write(client, key, *args):
    """EVAL, then WAIT 1 in one pipeline, on one connection: WAIT answers for this write. On Cluster,
    on the connection of the node serving key's slot in the client's map. Redirected: sent again
    by the client's own routing, unconfirmed. Returns (reply, when it answered (at most), confirmed)."""
    if chaos_wait_ms <= 0:
        reply = client.eval(*args)
        return reply, str(int(time.time() * 1000)), None
    at = str(int(time.time() * 1000))
    cluster = isinstance(client, chaos_redis_cluster.RedisCluster)
    try:
        node = client.get_redis_connection(client.get_node_from_key(key)) if cluster else client
        pipe = node.pipeline(transaction=False)
        pipe.eval(*args)
        pipe.execute_command("WAIT", 1, chaos_wait_ms)
        reply, waited = pipe.execute(raise_on_error=False)
    except chaos_redirected:
        if not cluster:
            raise
        return client.eval(*args), at, False
    if isinstance(reply, chaos_redirected) and cluster:
        return client.eval(*args), at, False
    if isinstance(reply, Exception):
        raise reply
    return reply, at, not isinstance(waited, Exception) and int(waited) >= 1


def chaos_text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


chaos_plain_xreadgroup = chaos_redis.Redis.xreadgroup


def chaos_xreadgroup(self, groupname, consumername, streams, *args, **kwargs):
    reply = chaos_plain_xreadgroup(self, groupname, consumername, streams, *args, **kwargs)
    how = "new" if all(chaos_text(i) == ">" for i in streams.values()) else "own"
    records = []
    for stream, entries in reply or []:
        for entry_id, fields in entries:
            if not fields:
                continue
            key = chaos_text(fields.get(b"k", b""))
            chaos_held[(chaos_text(stream), chaos_text(entry_id))] = key
            chaos_seen_at[key] = time.time()
            now = str(int(time.time() * 1000))
            records.append(
                " ".join([key, ${g}, chaos_text(stream), chaos_text(entry_id), now, how, chaos_consumer])
            )
    chaos_local("deliveries", records)
    if records:
        chaos_recorder.rpush(${deliveries}, *records)
    return reply


def chaos_xack(self, name, groupname, *ids):
    done = 0
    for entry_id in ids:
        where = (chaos_text(name), chaos_text(entry_id))
        key = chaos_held.pop(where, "")
        now = str(int(time.time() * 1000))
        record = " ".join([key, chaos_text(groupname), where[0], where[1], chaos_consumer, now])
        args = (chaos_ack_lua, 2, name, ${acks}, groupname, entry_id, record)
        n, at, confirmed = chaos_write(self, name, *args)
        if n == 1:
            chaos_local("acks", [record], confirmed, at)
        done += n
    return done


for chaos_class in (chaos_redis.Redis, chaos_redis_cluster.RedisCluster):
    chaos_class.xreadgroup = chaos_xreadgroup
    chaos_class.xack = chaos_xack


def chaos_stall(why):
    now = str(int(time.time() * 1000))
    records = [" ".join([key, ${g}, now, why]) for key in chaos_held.values()]
    chaos_local("stalls", records)
    if records:
        chaos_recorder.rpush(${stalls}, *records)


def chaos_exit_hook(kind, value, trace):
    # The loop died (a connection error at a failover): what it held stays pending, a crash.
    try:
        chaos_stall("error")
    finally:
        sys.__excepthook__(kind, value, trace)


sys.excepthook = chaos_exit_hook


def handle(fields):
    key = chaos_text(fields.get(b"k", b""))
    if time.time() - chaos_seen_at.get(key, time.time()) > ${LATE_MS / 1000}:
        now = str(int(time.time() * 1000))
        late = " ".join([key, ${g}, now, "late"])
        chaos_local("stalls", [late])
        chaos_recorder.rpush(${stalls}, late)
    if b"poison" in fields:
        raise RuntimeError("poison " + chaos_text(fields.get(b"k", b"")))
    if chaos_behaviour == "crashy" and chaos_random.random() < ${CRASH_RATE}:
        chaos_stall("crash")  # crash mid-batch: what is held here stays pending
        os._exit(3)
    if chaos_behaviour == "slow" and chaos_random.random() < ${SLOW_RATE}:
        chaos_stall("slow")
        time.sleep(${SLOW_MS / 1000})


`;
}

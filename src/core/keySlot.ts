/** Redis Cluster key hashing: CRC16 (XMODEM) of the hash tag, or of the whole key, mod 16384. */

const TABLE = ((): Uint16Array => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i += 1) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit += 1)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0);
  return crc;
}

/** The hash tag as Redis Cluster reads it: between the first `{` and the next `}`, if non-empty. */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf("{");
  if (open === -1) return undefined;
  const close = key.indexOf("}", open + 1);
  if (close === -1 || close === open + 1) return undefined;
  return key.slice(open + 1, close);
}

export function keySlot(key: string): number {
  return crc16(Buffer.from(hashTag(key) ?? key)) % 16384;
}

/**
 * A key named after `key` that Redis Cluster puts in the same slot, for data that one script must
 * touch together with `key`. A key with a hash tag keeps it (`{t}.orders` gives `{t}.orders:x`);
 * a key without one hashes whole, so wrapping it in braces keeps its slot (`orders` gives
 * `{orders}:x`). A name that braces cannot wrap (no tag, a stray `}` inside: `a}b`) gets a tag
 * found by search, so the answer always shares the slot.
 */
export function sameSlotKey(key: string, suffix: string): string {
  if (hashTag(key) !== undefined) return `${key}:${suffix}`;
  const wrapped = `{${key}}:${suffix}`;
  const slot = keySlot(key);
  if (keySlot(wrapped) === slot) return wrapped;
  // 16384 slots: a few thousand short tags cover them all, found in well under a millisecond.
  for (let n = 0; ; n += 1) {
    const tag = `slot${slot}-${n}`;
    if (keySlot(tag) === slot) return `{${tag}}:${suffix}`;
  }
}

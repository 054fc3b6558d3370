'use strict';
// Redis Cluster's key slot (common/src/cluster_slot.cpp): CRC16-CCITT of the hash tag, mod 16384.

const CLUSTER_SLOTS = 16384;

function crc16(bytes) {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; ++bit) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function hashTag(key) {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

function keySlot(key) {
  return crc16(Buffer.from(hashTag(key), 'utf8')) % CLUSTER_SLOTS;
}

module.exports = { crc16, hashTag, keySlot };

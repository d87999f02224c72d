#!/usr/bin/env node
// Rewrites the f32 tensors of a safetensors file as f16 (round to nearest, ties to even), byte for byte
// the same on every machine: tensors in name order, the header's keys in name order, padded with
// spaces to 8 bytes, no metadata. Usage: node to-f16.mjs <in.safetensors> <out.safetensors>
import { readFileSync, writeFileSync } from 'node:fs'

const [input, output] = process.argv.slice(2)
if (!input || !output) throw new Error('usage: node to-f16.mjs <in.safetensors> <out.safetensors>')
const file = readFileSync(input)
const headerLength = Number(file.readBigUInt64LE(0))
const header = JSON.parse(file.subarray(8, 8 + headerLength).toString('utf8'))
const data = file.subarray(8 + headerLength)

const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)
// IEEE 754 binary32 to binary16, round to nearest even; overflow to infinity, NaN kept NaN.
function toHalf(x) {
  f32[0] = x
  const bits = u32[0]
  const sign = (bits >>> 16) & 0x8000
  const exp = (bits >>> 23) & 0xff
  let mant = bits & 0x7fffff
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0)
  let e = exp - 127 + 15
  if (e >= 0x1f) return sign | 0x7c00
  if (e <= 0) {
    if (e < -10) return sign
    mant |= 0x800000
    const shift = 14 - e
    let half = mant >>> shift
    const rest = mant & ((1 << shift) - 1)
    const mid = 1 << (shift - 1)
    if (rest > mid || (rest === mid && (half & 1))) half++
    return sign | half
  }
  let half = (e << 10) | (mant >>> 13)
  const rest = mant & 0x1fff
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half++ // a carry into the exponent is right
  return sign | half
}

const names = Object.keys(header).filter((k) => k !== '__metadata__').sort()
const out = {}
const parts = []
let offset = 0
for (const name of names) {
  const { dtype, shape, data_offsets: [begin, end] } = header[name]
  let half
  if (dtype === 'F32') {
    const count = (end - begin) / 4
    half = Buffer.alloc(count * 2)
    for (let i = 0; i < count; i++) half.writeUInt16LE(toHalf(data.readFloatLE(begin + 4 * i)), 2 * i)
  } else {
    half = Buffer.from(data.subarray(begin, end)) // integer tensors (position_ids) as they are
  }
  out[name] = { dtype: dtype === 'F32' ? 'F16' : dtype, shape, data_offsets: [offset, offset + half.length] }
  offset += half.length
  parts.push(half)
}
let json = JSON.stringify(out)
json += ' '.repeat((8 - (json.length % 8)) % 8)
const size = Buffer.alloc(8)
size.writeBigUInt64LE(BigInt(Buffer.byteLength(json)))
writeFileSync(output, Buffer.concat([size, Buffer.from(json, 'utf8'), ...parts]))
console.log(`${output}: ${names.length} tensors, ${offset} bytes of data`)

// murmurhash-js ships no types; the tests use it as the independent reference hash.
declare module 'murmurhash-js' {
  /** MurmurHash3 x86 32-bit over a byte string (each char one byte, 0–255). */
  interface Murmur3 {
    (key: string, seed?: number): number;
    murmur3(key: string, seed?: number): number;
  }
  const murmurhash: Murmur3;
  export default murmurhash;
}

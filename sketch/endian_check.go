//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package sketch

// The binary encodings view buckets as little-endian bytes in place. Refuse
// to build on big-endian platforms rather than write wrong bytes.
var _ = "sketch: big-endian platforms are not supported" + 1

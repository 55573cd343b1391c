package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"runtime/debug"
)

// The keywords of the text chunks each plot carries: what it shows
// (figure.describe) and the toolchain that drew it (renderer).
const (
	keyDescription = "sketchcc-plot"
	keyRenderer    = "sketchcc-renderer"
)

// pngSignature opens every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// withText returns png with an uncompressed iTXt chunk (UTF-8 text) per
// key and value inserted after its IHDR chunk, which the PNG
// specification puts first. png must be a PNG as image/png writes one.
func withText(png []byte, kv ...string) []byte {
	ihdrEnd := len(pngSignature) + 8 + int(binary.BigEndian.Uint32(png[len(pngSignature):])) + 4
	out := append([]byte{}, png[:ihdrEnd]...)
	for i := 0; i+1 < len(kv); i += 2 {
		// keyword, NUL, compression flag and method 0, empty language
		// tag and translated keyword, each NUL-terminated, then the text.
		data := append(append([]byte(kv[i]), 0, 0, 0, 0, 0), kv[i+1]...)
		chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		chunk = append(append(chunk, "iTXt"...), data...)
		chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
		out = append(out, chunk...)
	}
	return append(out, png[ihdrEnd:]...)
}

// pngText returns the text of png's iTXt chunk of keyword key, if any.
func pngText(png []byte, key string) (string, bool) {
	if !bytes.HasPrefix(png, pngSignature) {
		return "", false
	}
	for b := png[len(pngSignature):]; len(b) >= 12; {
		n := int(binary.BigEndian.Uint32(b))
		if n > len(b)-12 {
			return "", false
		}
		if data := b[8 : 8+n]; string(b[4:8]) == "iTXt" {
			if text, ok := bytes.CutPrefix(data, append([]byte(key), 0, 0, 0, 0, 0)); ok {
				return string(text), true
			}
		}
		b = b[12+n:]
	}
	return "", false
}

// renderer names what decides a plot's pixels beyond its description:
// the Go toolchain and target, and gonum/plot's version.
func renderer() string {
	r := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOAMD64" || s.Key == "GOARM64" {
				r += " " + s.Key + "=" + s.Value
			}
		}
		for _, d := range bi.Deps {
			if d.Path == "gonum.org/v1/plot" {
				r += " " + d.Path + "@" + d.Version
			}
		}
	}
	return r
}

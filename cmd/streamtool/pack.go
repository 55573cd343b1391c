package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/stream"
)

type packResult struct {
	Input          string  `json:"input"`
	Output         string  `json:"output"`
	Format         string  `json:"format"`
	Vertices       uint32  `json:"vertices"`
	Updates        uint64  `json:"updates"`
	Bytes          int64   `json:"bytes"`
	BytesPerUpdate float64 `json:"bytes_per_update,omitempty"`
	// CRC32C is the stream's digest (stream.Digest), the same in both
	// formats: checked on the output before it is renamed into place.
	CRC32C  string  `json:"crc32c"`
	Seconds float64 `json:"seconds"`
}

// digester is a Source that hashes what it reads: the binary and packed
// readers.
type digester interface{ Digest() stream.Digest }

// recode copies the stream at in (binary, packed or gzip-compressed
// either) to out in format f, then reads out back and checks that its
// digest is the input's before renaming it into place.
func recode(ctx context.Context, e *env, in, out string, f stream.Format) error {
	t0 := time.Now()
	src, closeSrc, err := openStream(ctx, in, "binary")
	if err != nil {
		return err
	}
	defer closeSrc()
	h := src.Header()
	var o outputs
	defer o.abort()
	w, err := o.create(ctx, out)
	if err != nil {
		return err
	}
	sw, err := stream.NewFormatWriter(w, h, f)
	if err != nil {
		return err
	}
	buf := make([]stream.Update, 16<<10)
	for {
		n, err := src.Read(buf)
		for _, u := range buf[:n] {
			if err := sw.Write(u); err != nil {
				return fmt.Errorf("cannot write %s: %w", out, err)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := sw.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", out, err)
	}
	want := src.(interruptible).Source.(digester).Digest()
	tmp := o.files[len(o.files)-1].Name()
	got, err := fileDigest(ctx, tmp)
	if err != nil {
		return fmt.Errorf("cannot check %s: %w", out, err)
	}
	if got != want {
		return fmt.Errorf("BUG: %s reads back as %d records of CRC-32C %08x, the input's are %d of %08x",
			out, got.Records, got.CRC, want.Records, want.CRC)
	}
	fi, err := os.Stat(tmp)
	if err != nil {
		return err
	}
	if err := o.commit(); err != nil {
		return err
	}
	r := packResult{Input: in, Output: out, Format: f.String(), Vertices: h.Vertices, Updates: h.Updates,
		Bytes: fi.Size(), CRC32C: fmt.Sprintf("%08x", got.CRC), Seconds: time.Since(t0).Seconds()}
	if h.Updates > 0 {
		r.BytesPerUpdate = float64(r.Bytes) / float64(h.Updates)
	}
	return e.printJSON(r)
}

// fileDigest returns the digest of every record of the stream file at
// path, binary or packed.
func fileDigest(ctx context.Context, path string) (stream.Digest, error) {
	bf, err := stream.Open(path)
	if err != nil {
		return stream.Digest{}, err
	}
	defer bf.Close()
	return bf.Digest(ctx, 0, bf.Header().Updates, nil)
}

// recodeCommand is pack or unpack: IN -o OUT in format f.
func recodeCommand(usage, about string, f stream.Format) *command {
	return &command{usage: usage, about: about,
		setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
			var out string
			fs.StringVarP(&out, "output", "o", "", f.String()+" stream to write (required)")
			return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
				in, err := oneArg(fs, "input stream")
				if err != nil {
					return err
				}
				if out == "" {
					return usagef("--output is required")
				}
				return recode(ctx, e, in, out, f)
			}
		}}
}

var packCommand = recodeCommand("streamtool pack IN -o OUT",
	`Writes the stream IN (binary or packed, either possibly gzip-compressed)
to OUT in the packed format of package stream: 1 + 2·⌈log2 V⌉ bits per
update (4.375 bytes at 2^17 vertices) in CRC-32C-checked blocks of 65,536
updates that readers can seek to. Reads OUT back and checks that its
digest (CRC-32C of the 9-byte binary records) is IN's before renaming it
into place; prints a JSON summary with the size and the digest.
`, stream.FormatPacked)

var unpackCommand = recodeCommand("streamtool unpack IN -o OUT",
	`Writes the stream IN (packed or binary, either possibly gzip-compressed)
to OUT in the binary (GraphZeppelin) format: pack then unpack gives the
original bytes. Checks OUT's digest against IN's as pack does.
`, stream.FormatBinary)

package sketch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// ErrEncoding is wrapped by the decoders for malformed input.
var ErrEncoding = errors.New("sketch: malformed encoding")

// tableMagic starts a table checkpoint.
const tableMagic = "SKCCTBL1"

// TableHeaderBytes is the size of WriteTo's header: magic, vertices u32,
// rows u32, columns u32, sets u32, factor f64, seed u64.
const TableHeaderBytes = 8 + 4*4 + 8 + 8

// WriteTo writes a checkpoint of the table to w:
//
//	"SKCCTBL1" | vertices u32 | rows u32 | columns u32 | sets u32 |
//	factor f64 | seed u64 | Vertices·BucketsPerVertex buckets
//
// little-endian, sets being 0 for one set (Params.WithSets) as in the
// tables written before sets were. It returns the bytes written.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(AppendTableHeader(make([]byte, 0, TableHeaderBytes), t.p))
	total := int64(n)
	if err != nil {
		return total, fmt.Errorf("sketch: cannot write table header: %w", err)
	}
	// Write in 1 MiB pieces so a huge table needs no second copy.
	body := AsBytes(t.buckets)
	for len(body) > 0 {
		k := min(len(body), 1<<20)
		n, err := w.Write(body[:k])
		total += int64(n)
		if err != nil {
			return total, fmt.Errorf("sketch: cannot write table at byte %d: %w", total, err)
		}
		body = body[k:]
	}
	return total, nil
}

// AppendTableHeader appends to b the header that WriteTo writes before
// the buckets of a table of parameters p (TableHeaderBytes bytes), for a
// writer that produces the buckets itself, vertex after vertex (a sketch
// store on disk, range by range).
func AppendTableHeader(b []byte, p Params) []byte {
	b = append(b, tableMagic...)
	b = binary.LittleEndian.AppendUint32(b, p.vertices)
	b = binary.LittleEndian.AppendUint32(b, uint32(p.rows))
	b = binary.LittleEndian.AppendUint32(b, uint32(p.columns))
	sets := uint32(p.sets)
	if sets == 1 {
		sets = 0 // as before sets were
	}
	b = binary.LittleEndian.AppendUint32(b, sets)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.factor))
	return binary.LittleEndian.AppendUint64(b, p.seed)
}

// ParamsOfHeader returns the parameters of a table header's vertices,
// factor, seed and sets (0 or 1 for one set): NewParams', then WithSets'.
func ParamsOfHeader(vertices uint32, factor float64, seed uint64, sets uint32) (Params, error) {
	p, err := NewParams(vertices, factor, seed)
	if err == nil && sets > 1 {
		p, err = p.WithSets(int(min(sets, MaxColumns+1)))
	}
	return p, err
}

// ReadTable reads a checkpoint written by WriteTo. It returns an error
// wrapping ErrEncoding for a bad magic, a geometry that NewParams would not
// produce, or a short body (io.ErrUnexpectedEOF also wrapped).
func ReadTable(r io.Reader) (*Table, error) {
	var h [TableHeaderBytes]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("%w: table header: %w", ErrEncoding, err)
	}
	if string(h[:8]) != tableMagic {
		return nil, fmt.Errorf("%w: bad table magic %q", ErrEncoding, h[:8])
	}
	v := binary.LittleEndian.Uint32(h[8:])
	rows := binary.LittleEndian.Uint32(h[12:])
	cols := binary.LittleEndian.Uint32(h[16:])
	factor := math.Float64frombits(binary.LittleEndian.Uint64(h[24:]))
	seed := binary.LittleEndian.Uint64(h[32:])
	p, err := ParamsOfHeader(v, factor, seed, binary.LittleEndian.Uint32(h[20:]))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEncoding, err)
	}
	if p.rows != int(rows) || p.columns != int(cols) {
		return nil, fmt.Errorf("%w: table geometry %d×%d, parameters give %d×%d",
			ErrEncoding, rows, cols, p.rows, p.columns)
	}
	t := NewTable(p)
	if err := t.ReadBuckets(r); err != nil {
		return nil, fmt.Errorf("%w: table body: %w", ErrEncoding, err)
	}
	return t, nil
}

// ReadBuckets reads every bucket of the table from r, as WriteTo writes
// them after its header (TableBytes bytes, vertex after vertex), for a
// reader that has read or checked the header itself. It returns
// io.ReadFull's errors (io.EOF when r is empty, io.ErrUnexpectedEOF when it
// ends early). Not safe with a concurrent user of the table.
func (t *Table) ReadBuckets(r io.Reader) error {
	_, err := io.ReadFull(r, AsBytes(t.buckets))
	return err
}

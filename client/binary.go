package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
)

// The API's binary encoding of a connected batch (README, "Running as a
// service"), all integers little-endian: the request body is the pairs,
// u uint32 then v uint32 each; the answer is position uint64, the pair
// count uint32, the producer count P uint32, P producers (id uint32,
// applied uint64), then a bitset whose bit i%8 of byte i/8 says whether
// pair i is connected.
const (
	binaryType      = "application/octet-stream"
	binaryHeadBytes = 16
	producerBytes   = 12
)

// ConnectedBatch asks what Connected asks, in the API's binary encoding:
// 8 bytes a pair out and one bit a pair back, no JSON on either side, the
// choice for large batches at high rates. Its answer's Producers carry ID
// and Applied only (Status has their names and states). The server takes
// at most 100,000 pairs a request; an empty batch is a 400 *APIError.
func (c *Client) ConnectedBatch(ctx context.Context, pairs [][2]uint32) (*Connected, error) {
	body := make([]byte, 8*len(pairs))
	for i, p := range pairs {
		binary.LittleEndian.PutUint32(body[8*i:], p[0])
		binary.LittleEndian.PutUint32(body[8*i+4:], p[1])
	}
	const path = "/v1/connected"
	resp, err := c.send(ctx, http.MethodPost, path, binaryType, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var b []byte
	if resp.ContentLength > 0 && resp.ContentLength <= 1<<24 {
		b = make([]byte, resp.ContentLength)
		_, err = io.ReadFull(resp.Body, b)
	} else {
		b, err = io.ReadAll(io.LimitReader(resp.Body, 1<<24))
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("client: POST %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("client: POST %s: reading the answer: %w", path, err)
	}
	out, err := decodeBinary(b, len(pairs))
	if err != nil {
		return nil, fmt.Errorf("client: POST %s: malformed binary answer: %w", path, err)
	}
	return out, nil
}

// decodeBinary decodes a binary answer to a batch of n pairs.
func decodeBinary(b []byte, n int) (*Connected, error) {
	if len(b) < binaryHeadBytes {
		return nil, fmt.Errorf("%d bytes, shorter than the %d-byte head", len(b), binaryHeadBytes)
	}
	out := &Connected{Head: Head{Position: binary.LittleEndian.Uint64(b)}}
	if got := binary.LittleEndian.Uint32(b[8:]); int(got) != n {
		return nil, fmt.Errorf("answers %d pairs, %d asked", got, n)
	}
	np := int(binary.LittleEndian.Uint32(b[12:]))
	if want := binaryHeadBytes + np*producerBytes + (n+7)/8; len(b) != want {
		return nil, fmt.Errorf("%d bytes, want %d for %d producers and %d pairs", len(b), want, np, n)
	}
	b = b[binaryHeadBytes:]
	out.Producers = make([]Producer, np)
	for i := range out.Producers {
		out.Producers[i] = Producer{ID: int(binary.LittleEndian.Uint32(b)), Applied: binary.LittleEndian.Uint64(b[4:])}
		b = b[producerBytes:]
	}
	out.Connected = make([]bool, n)
	for i := range out.Connected {
		out.Connected[i] = b[i/8]&(1<<(i%8)) != 0
	}
	return out, nil
}

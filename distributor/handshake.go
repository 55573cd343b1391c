package distributor

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"

	"sketchcc/gutters"
	"sketchcc/sketch"
)

// nonceBytes is the size of a handshake challenge.
const nonceBytes = 32

// authMAC answers a challenge: HMAC-SHA256 under the cluster key of the
// protocol string, the answering side's role and both nonces, the
// challenger's first. The role keeps one side's answer from serving as the
// other's.
func authMAC(key []byte, role string, challenge, own []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(protocolVersion))
	m.Write([]byte{0})
	m.Write([]byte(role))
	m.Write([]byte{0})
	m.Write(challenge)
	m.Write(own)
	return m.Sum(nil)
}

func newNonce() []byte {
	b := make([]byte, nonceBytes)
	rand.Read(b) // never fails (crypto/rand documents it)
	return b
}

// handshakeResult is what the main node learns from a worker.
type handshakeResult struct {
	name    string
	threads int
	// maxFrameBytes is the largest frame payload the worker reads: the
	// main node's frames stay within it.
	maxFrameBytes int
}

// frameLimitError says that a peer's frame limit is below the largest
// frame that must be sent to it, and what to change.
func frameLimitError(peer string, limit, need int, what string) error {
	return fmt.Errorf("%w: the %s reads frames of at most %d bytes (its MaxFrameBytes), and %s needs %d; "+
		"raise the %s's MaxFrameBytes to at least %d", ErrParams, peer, limit, what, need, peer, need)
}

// mainHandshake runs the main node's side of the handshake (doc.go) on a
// fresh connection, and seals fr and fw for the frames that follow it.
// The caller sets the deadline. A refused worker is told
// why before the error is returned.
//
// maxFrame is the largest frame payload the main node reads; the worker
// answers with its own, which must hold a batch of maxBatch updates, or
// the worker is refused (both sides say why).
func mainHandshake(fr *frameReader, fw *frameWriter, key []byte, name string, p sketch.Params, maxBatch, maxFrame int) (handshakeResult, error) {
	var res handshakeResult
	mine := newNonce()
	if err := fw.writeVersion(); err != nil {
		return res, err
	}
	if _, err := fw.write(helloMsg, &hello{Name: name, Nonce: mine}); err != nil {
		return res, err
	}
	if err := fr.readVersion(); err != nil {
		return res, err
	}
	var h hello
	if err := fr.expect(helloMsg, &h); err != nil {
		return res, err
	}
	res.name = h.Name
	if len(h.Nonce) != nonceBytes {
		return res, fmt.Errorf("%w: worker nonce of %d bytes, want %d", ErrFrame, len(h.Nonce), nonceBytes)
	}
	if !hmac.Equal(h.MAC, authMAC(key, "worker", mine, h.Nonce)) {
		fw.write(errorMsg, &failure{Reason: "authentication failed: the worker's cluster key differs from the main node's"})
		return res, fmt.Errorf("%w: the worker did not answer the challenge with the main node's cluster key", ErrAuth)
	}
	m := &params{Vertices: p.Vertices(), Factor: p.Factor(), Seed: p.Seed(), Rows: p.Rows(), Columns: p.Columns(),
		MaxBatchUpdates: maxBatch, MaxFrameBytes: maxFrame, MAC: authMAC(key, "main", h.Nonce, mine)}
	if _, err := fw.write(paramsMsg, m); err != nil {
		return res, err
	}
	var r ready
	if err := fr.expect(readyMsg, &r); err != nil {
		return res, err
	}
	// Every frame from here on is sealed, both ways (seal.go).
	fw.seal = newSeal(key, "main", mine, h.Nonce)
	fr.seal = newSeal(key, "worker", mine, h.Nonce)
	res.threads, res.maxFrameBytes = r.Threads, r.MaxFrameBytes
	if need := maxBatchBytes(maxBatch); r.MaxFrameBytes < need {
		err := frameLimitError("worker", r.MaxFrameBytes, need, fmt.Sprintf("a batch of %d updates", maxBatch))
		fw.write(errorMsg, &failure{Reason: err.Error()})
		return res, err
	}
	return res, nil
}

// workerTerms is what a worker learns from the main node.
type workerTerms struct {
	p sketch.Params
	// maxBatch is the largest batch the main node sends, in updates.
	maxBatch int
	// maxFrameBytes is the largest frame payload the main node reads:
	// the worker's frames of deltas stay within it.
	maxFrameBytes int
}

// workerHandshake runs a worker's side of the handshake on an accepted
// connection, seals fr and fw for the frames that follow it, and returns
// the graph's sketch parameters and the limits the main node set. maxFrame is the largest frame payload the worker reads.
// The caller sets the deadline.
func workerHandshake(fr *frameReader, fw *frameWriter, key []byte, name string, threads, maxFrame int) (workerTerms, error) {
	// The two sides take turns, so that the handshake also runs over
	// unbuffered pipes; the worker says nothing before the main node's
	// protocol string.
	if err := fr.readVersion(); err != nil {
		return workerTerms{}, err
	}
	var h hello
	if err := fr.expect(helloMsg, &h); err != nil {
		return workerTerms{}, err
	}
	if err := fw.writeVersion(); err != nil {
		return workerTerms{}, err
	}
	if len(h.Nonce) != nonceBytes {
		return workerTerms{}, fmt.Errorf("%w: main node nonce of %d bytes, want %d", ErrFrame, len(h.Nonce), nonceBytes)
	}
	mine := newNonce()
	if _, err := fw.write(helloMsg, &hello{Name: name, Nonce: mine, MAC: authMAC(key, "worker", h.Nonce, mine)}); err != nil {
		return workerTerms{}, err
	}
	var m params
	if err := fr.expect(paramsMsg, &m); err != nil {
		return workerTerms{}, err
	}
	if !hmac.Equal(m.MAC, authMAC(key, "main", mine, h.Nonce)) {
		fw.write(errorMsg, &failure{Reason: "authentication failed: the main node's cluster key differs from the worker's"})
		return workerTerms{}, fmt.Errorf("%w: the main node did not answer the challenge with the worker's cluster key", ErrAuth)
	}
	p, err := sketch.NewParams(m.Vertices, m.Factor, m.Seed)
	if err == nil && m.Columns > p.Columns() && m.Columns%p.Columns() == 0 {
		// k sketch sets of p's columns each (sketch.Params.WithSets)
		p, err = p.WithSets(m.Columns / p.Columns())
	}
	if err == nil && (p.Rows() != m.Rows || p.Columns() != m.Columns) {
		err = fmt.Errorf("main node sketches have %d rows × %d columns, this build computes %d × %d",
			m.Rows, m.Columns, p.Rows(), p.Columns())
	}
	if err == nil && (m.MaxBatchUpdates < 1 || m.MaxBatchUpdates > gutters.MaxBatchUpdates) {
		err = fmt.Errorf("batches of up to %d updates, need [1, %d]", m.MaxBatchUpdates, gutters.MaxBatchUpdates)
	}
	if err != nil {
		err = fmt.Errorf("%w: %v", ErrParams, err)
	} else if need := maxBatchBytes(m.MaxBatchUpdates); maxFrame < need {
		err = frameLimitError("worker", maxFrame, need, fmt.Sprintf("a batch of %d updates", m.MaxBatchUpdates))
	} else if need := newDeltaCodec(p).maxBytes(); m.MaxFrameBytes < need {
		err = frameLimitError("main node", m.MaxFrameBytes, need, "one delta")
	}
	if err != nil {
		fw.write(errorMsg, &failure{Reason: err.Error()})
		return workerTerms{}, err
	}
	if _, err := fw.write(readyMsg, &ready{Threads: threads, MaxFrameBytes: maxFrame}); err != nil {
		return workerTerms{}, err
	}
	fw.seal = newSeal(key, "worker", h.Nonce, mine)
	fr.seal = newSeal(key, "main", h.Nonce, mine)
	return workerTerms{p: p, maxBatch: m.MaxBatchUpdates, maxFrameBytes: m.MaxFrameBytes}, nil
}

// checkKey accepts no key or one of 16, 24 or 32 bytes (memberlist's AES
// key sizes: the same key encrypts the gossip).
func checkKey(k []byte) error {
	switch len(k) {
	case 0, 16, 24, 32:
		return nil
	}
	return fmt.Errorf("distributor: cluster key of %d bytes, need 16, 24 or 32", len(k))
}

// LoadKey reads the cluster key file at path (see ParseKey); the error
// names the file.
func LoadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the cluster key: %w", err)
	}
	k, err := ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParseKey reads a cluster key from the contents of a key file: base64
// (as `head -c 32 /dev/urandom | base64` writes it) of 16, 24 or 32 bytes,
// or, for text that is not base64, that many raw bytes, once surrounding
// white space is trimmed. Text that is base64 is always taken as base64,
// so a key of the wrong size (`head -c 12 … | base64`, 16 characters) is
// refused rather than used as 16 raw bytes. Its error gives the length
// that was wrong: the decoded length of base64 text, else the raw length.
func ParseKey(b []byte) ([]byte, error) {
	s := bytes.TrimSpace(b)
	k, err := base64.StdEncoding.DecodeString(string(s))
	if err == nil && checkKey(k) == nil && len(k) > 0 {
		return k, nil
	}
	if err != nil && len(s) > 0 && checkKey(s) == nil {
		return s, nil
	}
	const want = "want base64 of 16, 24 or 32 bytes (head -c 32 /dev/urandom | base64), or that many raw bytes"
	switch {
	case len(s) == 0:
		return nil, fmt.Errorf("distributor: cluster key is empty: %s", want)
	case err == nil:
		return nil, fmt.Errorf("distributor: cluster key is base64 of %d bytes (%d characters): %s", len(k), len(s), want)
	}
	return nil, fmt.Errorf("distributor: cluster key of %d raw bytes, not base64: %s", len(s), want)
}

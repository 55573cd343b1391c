package distributor

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by operations on a closed Pool or Worker.
	ErrClosed = errors.New("distributor: closed")
	// ErrVersion is wrapped when a peer does not open with this build's
	// protocol string ("sketchcc-batch/6").
	ErrVersion = errors.New("distributor: protocol version mismatch")
	// ErrFrame is wrapped when a frame breaks the protocol: an unknown
	// type, a length over its limit, a malformed header or payload.
	ErrFrame = errors.New("distributor: malformed frame")
	// ErrAuth is wrapped when a peer fails the cluster-key challenge.
	ErrAuth = errors.New("distributor: authentication failed; check that the main node and every worker have the same cluster key")
	// ErrParams is wrapped when a worker cannot use the main node's sketch
	// parameters.
	ErrParams = errors.New("distributor: incompatible sketch parameters")
)

// ProtocolError is a bad frame or handshake from one peer. The
// connection it came on is dropped; callers errors.As it to tell a
// misbehaving peer from a network failure.
type ProtocolError struct {
	// Worker is the peer: a node name or address.
	Worker string
	// Err wraps ErrVersion, ErrFrame, ErrAuth or ErrParams.
	Err error
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("distributor: protocol error from %s: %v", e.Worker, e.Err)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// PeerError is the reason a peer gave, in an error frame, for closing the
// connection.
type PeerError struct {
	Reason string
}

func (e *PeerError) Error() string { return "peer closed the connection: " + e.Reason }

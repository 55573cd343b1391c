package distributor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"sketchcc/gutters"
	"sketchcc/store"
)

// ClusterConfig configures StartCluster.
type ClusterConfig struct {
	// Listen is the gossip address workers join, HOST:PORT; port 0 picks
	// one (Cluster.Addr).
	Listen string
	// Key is the cluster key (16, 24 or 32 bytes), which encrypts the
	// gossip and authenticates the data plane; nil means none.
	Key []byte
	// GossipLocal selects memberlist's loopback timings (tests).
	GossipLocal bool
	// Pool configures the work distributors; its Name and Key are set
	// from the membership and Key.
	Pool Config
	// Logger receives cluster events; nil discards them.
	Logger *slog.Logger
}

// Cluster is a main node's side of its cluster: the membership workers
// join, and the Pool that follows it and ships them batches.
//
// Stop order (Close): the watch on the run's context ends; if that context
// is done the Pool is abandoned (every worker told "main node
// interrupted"); the Pool closes (workers told stop, unanswered batches
// sketched here); then the membership leaves within leaveTimeout.
//
// A nil *Cluster is a main node alone: Late and Report return nil, and
// Drain and Close do nothing.
type Cluster struct {
	ctx     context.Context
	listen  string // ClusterConfig.Listen
	m       *Membership
	pool    *Pool
	log     *slog.Logger
	unwatch func() bool
	closed  sync.Once
}

// leaveTimeout bounds the main node's leave (Membership.Close): the
// workers connected were told stop, and the exit must not wait.
const leaveTimeout = 250 * time.Millisecond

// StartCluster starts the membership on cfg.Listen and a Pool over g and
// st (NewPool) that follows it. When ctx is done the Pool is abandoned at
// once, so that a stream reader blocked by back-pressure (workers that do
// not answer hold every credit) goes on and sees it. Close stops it all.
func StartCluster(ctx context.Context, g *gutters.Gutters, st *store.Store, cfg ClusterConfig) (*Cluster, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := NewMembership(MembershipConfig{BindAddr: cfg.Listen, Key: cfg.Key, Local: cfg.GossipLocal,
		Meta: NodeMeta{Role: RoleMain}, Logger: cfg.Logger.With("component", "memberlist")})
	if err != nil {
		return nil, err
	}
	pc := cfg.Pool
	pc.Name, pc.Key = m.Name(), cfg.Key
	if pc.Logger == nil {
		pc.Logger = cfg.Logger.With("component", "distributor")
	}
	pool, err := NewPool(g, st, pc)
	if err != nil {
		m.Shutdown()
		return nil, err
	}
	pool.Follow(m)
	return &Cluster{ctx: ctx, listen: cfg.Listen, m: m, pool: pool, log: cfg.Logger, unwatch: context.AfterFunc(ctx, pool.Abandon)}, nil
}

// Pool returns the cluster's Pool.
func (c *Cluster) Pool() *Pool { return c.pool }

// Late names who holds the batches a flush waits for (Pool.Late).
func (c *Cluster) Late() []string {
	if c == nil {
		return nil
	}
	return c.pool.Late()
}

// Report returns the Pool's counters after updates stream updates
// (NewReport).
func (c *Cluster) Report(updates uint64) *Report {
	if c == nil {
		return nil
	}
	return NewReport(c.pool.Stats(), updates)
}

// Addr returns the gossip address workers join; Name the main node's
// node name.
func (c *Cluster) Addr() string { return c.m.Addr() }

// Name returns the main node's node name in the cluster.
func (c *Cluster) Name() string { return c.m.Name() }

// WaitWorkers blocks until n workers are connected or ctx is done
// (Pool.WaitWorkers); its error then also names each member refused for
// another cluster key, or for none (Membership.Refused).
func (c *Cluster) WaitWorkers(ctx context.Context, n int) error {
	err := c.pool.WaitWorkers(ctx, n)
	if err != nil {
		if r := c.m.Refused(); r != "" {
			err = fmt.Errorf("%w; refused members with another cluster key or none: %s", err, r)
		}
	}
	return err
}

// Close stops the cluster in the order its doc comment gives. It returns
// within the Pool's Close plus leaveTimeout and a little; calls after the
// first do nothing.
func (c *Cluster) Close() {
	if c == nil {
		return
	}
	c.closed.Do(c.close)
}

func (c *Cluster) close() {
	c.unwatch()
	t0 := time.Now()
	if c.ctx.Err() != nil {
		// The interrupt also closes the stream under a blocked read, so
		// the run can end before the watch has abandoned the Pool (or
		// while it does): Close would tell the workers "main node done".
		// Abandon returns once the workers have been told.
		c.pool.Abandon()
	}
	c.pool.Close()
	c.log.Info("workers released", "duration", time.Since(t0))
	t0 = time.Now()
	switch err := c.m.Close(leaveTimeout); {
	case errors.Is(err, ErrLeaving):
		c.log.Info("exiting with the leave still spreading", "duration", time.Since(t0))
	case err != nil:
		c.log.Debug("the leave did not spread in time", "err", err) // usual: the workers were told stop and are gone
		fallthrough
	default:
		c.log.Info("left the cluster", "duration", time.Since(t0))
	}
}

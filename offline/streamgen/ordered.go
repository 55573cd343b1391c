package streamgen

import (
	"context"
	"sync"
)

// ordered runs produce(w, i) for i in [0, n) on workers goroutines (w is
// the worker's index, for per-worker state) and calls consume(i, v) in
// order of i on the calling goroutine. At most about 3·workers results
// wait at once. It returns the first error of produce, consume or ctx, after
// all goroutines have stopped.
func ordered[T any](ctx context.Context, n, workers int, produce func(w, i int) (T, error), consume func(i int, v T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	type job struct {
		i   int
		out chan result
	}
	jobs := make(chan job)
	// queue holds jobs in order; its capacity bounds the results that
	// wait for a slow earlier one.
	queue := make(chan job, 2*workers)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(queue)
		defer close(jobs)
		for i := range n {
			j := job{i: i, out: make(chan result, 1)}
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	})
	for w := range workers {
		wg.Go(func() {
			for j := range jobs {
				v, err := produce(w, j.i)
				j.out <- result{v, err}
			}
		})
	}
	var err error
	for j := range queue {
		select {
		case r := <-j.out:
			err = r.err
			if err == nil {
				err = consume(j.i, r.v)
			}
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
	}
	cancel()
	wg.Wait()
	return err
}

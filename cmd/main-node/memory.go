package main

import (
	"errors"
	"fmt"

	"sketchcc/ingest"
	"sketchcc/internal/cli"
	"sketchcc/sketch"
)

// checkMemory refuses a stream whose sketches and gutters cannot be
// allocated or filled on this machine, before trying (ingest.CheckMemory),
// naming the flag to lower. A sketch factor or a K whose columns exceed
// sketch.MaxColumns is a usage error.
func checkMemory(c config, cfg ingest.Config, updates uint64) error {
	err := ingest.CheckMemory(cfg, updates, c.stream)
	var me *ingest.MemoryError
	switch {
	case errors.Is(err, sketch.ErrParams) && (c.kconn.K > 1 || c.engine.SketchFactor != 1):
		return cli.Usage(fmt.Errorf("--k-connectivity=%d, --sketch-factor=%v: %w", c.kconn.K, c.engine.SketchFactor, err))
	case errors.As(err, &me):
		return errors.New(me.Advise(fieldFlags[me.Lower]))
	case err != nil:
		return fmt.Errorf("%s declares %d vertices: %w", c.stream, cfg.Vertices, err)
	}
	return nil
}

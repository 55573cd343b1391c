package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"
)

// LogFormat is how a command writes its log records on stderr: "text"
// (slog's key=value lines) or "json" (one JSON object per line, for log
// collectors). It is a pflag.Value checked when the flag is parsed.
type LogFormat string

// The log formats.
const (
	LogText LogFormat = "text"
	LogJSON LogFormat = "json"
)

func (f *LogFormat) String() string { return string(*f) }
func (f *LogFormat) Type() string   { return "string" }
func (f *LogFormat) Set(s string) error {
	switch LogFormat(s) {
	case LogText, LogJSON:
		*f = LogFormat(s)
		return nil
	}
	return fmt.Errorf("want text or json, got %q", s)
}

// LogFormatVar defines --log-format on fs, parsed into f, default text.
func LogFormatVar(fs *pflag.FlagSet, f *LogFormat) {
	*f = LogText
	fs.Var(f, "log-format", "log records on stderr as text (key=value) or json (one object per line)")
}

// NewLogger returns the logger a command passes to the libraries: records
// at level and above, written to w in format f (text when f is empty).
// The keys are those of the libraries (worker, addr, batches, err, …);
// the json form adds time, level and msg, and writes durations as the
// text form does ("1.5s"), not as integer nanoseconds.
func NewLogger(w io.Writer, f LogFormat, level slog.Leveler) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if f == LogJSON {
		opts.ReplaceAttr = durationText
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// durationText renders a duration attribute as time.Duration.String.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

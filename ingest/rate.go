package ingest

import "time"

// rateWindow is the span of samples a RateMeter averages over, and
// rateMinSpan the span it needs before it shows a rate: the first samples
// of a run, a few milliseconds apart after the sketches are allocated,
// made a progress bar's own rate show figures such as 21 G updates/s.
const (
	rateWindow  = 5 * time.Second
	rateMinSpan = time.Second
)

// RateMeter is the ingestion rate (Engine.Updates per second, for a
// progress display) over the last 5 s of samples of the growing count,
// and none until the samples span a second. The zero value is ready to
// use; it is not safe for concurrent use.
type RateMeter struct {
	at    []time.Time
	count []uint64
}

// Add records that the count was n at time t; t must not go back.
func (m *RateMeter) Add(t time.Time, n uint64) {
	m.at, m.count = append(m.at, t), append(m.count, n)
	i := 0
	for i < len(m.at)-2 && t.Sub(m.at[i+1]) >= rateWindow {
		i++
	}
	m.at, m.count = m.at[i:], m.count[i:]
}

// Rate returns the count's growth per second between the oldest and the
// newest sample kept, and false until they are a second apart.
func (m *RateMeter) Rate() (float64, bool) {
	if len(m.at) < 2 {
		return 0, false
	}
	span := m.at[len(m.at)-1].Sub(m.at[0])
	if span < rateMinSpan {
		return 0, false
	}
	return float64(m.count[len(m.count)-1]-m.count[0]) / span.Seconds(), true
}

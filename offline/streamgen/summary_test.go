package streamgen

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
)

// TestSummaryJSONCounts: the summary's JSON prints every count as an
// integer (a "drops" of 259528885.20070493 reads as a measurement error);
// only the density is a fraction.
func TestSummaryJSONCounts(t *testing.T) {
	s, err := Kron(context.Background(), DefaultKronConfig(8, 1), &bytes.Buffer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["drops"]; !ok {
		t.Fatalf("no drops in %s", b)
	}
	for k, v := range fields {
		if k == "model" || k == "density" {
			continue
		}
		if _, err := strconv.ParseUint(string(v), 10, 64); err != nil {
			t.Errorf("%q: %s is not an integer count", k, v)
		}
	}
}

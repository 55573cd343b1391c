package distributor

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// TestParseKey checks the key file forms and that an error gives the
// length that is wrong: the decoded one for base64 text.
func TestParseKey(t *testing.T) {
	b64 := func(n int) []byte {
		return []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) + "\n")
	}
	for _, n := range []int{16, 24, 32} {
		k, err := ParseKey(b64(n))
		if err != nil || !bytes.Equal(k, bytes.Repeat([]byte{7}, n)) {
			t.Errorf("base64 of %d bytes: %x, %v", n, k, err)
		}
	}
	raw := []byte("0123456789abcde!!") // 17 bytes, not base64
	if _, err := ParseKey(raw[:16]); err != nil {
		t.Errorf("16 raw bytes: %v", err)
	}
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{b64(20), "cluster key is base64 of 20 bytes (28 characters)"}, // was "of 28 bytes"
		// 16 characters of base64: 12 bytes, not a raw 16-byte key.
		{b64(12), "cluster key is base64 of 12 bytes (16 characters)"},
		{[]byte(" \n"), "cluster key is empty"},
		{raw, "cluster key of 17 raw bytes, not base64"},
	} {
		_, err := ParseKey(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "want base64 of 16, 24 or 32 bytes") {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

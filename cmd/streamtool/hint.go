package main

import "sketchcc/stream"

// textHint is what validate adds to its verdict on a file that is not a
// binary stream because it is text (stream.Sniff), as main-node's
// openSource does; "" for any other file.
func textHint(path string) string {
	if stream.Sniff(path) != stream.LooksText {
		return ""
	}
	return "; the file looks like text: validate reads binary streams; turn a text stream or an edge list into one with streamtool convert --from text|snap|mtx|lg|gml"
}

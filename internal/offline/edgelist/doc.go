// Package edgelist parses public edge-list formats into simple undirected
// graphs over dense vertex ids, and timestamped event lists into dense
// events.
//
// # Formats
//
//   - Snap: one edge per line, "u v [more columns]", fields separated by
//     spaces, tabs or commas (SNAP, KONECT, CSV). Lines starting with '#' or
//     '%' are comments. The first data line is skipped when its first field
//     is not a number (a header such as "fromNode,toNode"). Ids are signed
//     decimal integers; the vertex set is every id that appears, including
//     ids seen only in self-loops.
//   - MTX: MatrixMarket "coordinate" files. The size line "n n nnz" declares
//     n vertices (1-based ids); exactly nnz entries "i j [value...]" must
//     follow, each in range.
//   - LG: the Graphs.jl LG text format. The header "nv,ne,kind,name[,...]"
//     declares nv vertices (1-based ids); exactly ne lines "u,v" follow.
//   - GML: "graph [ node [ id N ... ] ... edge [ source A target B ... ] ]".
//     The node list declares the vertices; an edge naming an undeclared node
//     is an error. Keys other than id, source and target are ignored.
//   - Text: the untyped text stream format of package stream: a first line
//     "n m" declares n vertices (0-based ids), then exactly m "u v" lines.
//
// Gzip input is decompressed transparently; it is recognised by its magic
// bytes, not by its name (see Decompressed).
//
// # Relabelling
//
// Every format relabels ids by rank: new id v is the position of the
// original id in the ascending list of all vertex ids of the file (declared
// or seen). For the declared-count formats this keeps the natural order:
// 1..n become 0..n-1 (MTX, LG), 0..n-1 stay (Text), GML node ids keep their
// ascending order. Graph.ID maps new ids back.
//
// # Simple graphs
//
// Direction is ignored: (u,v) and (v,u) are one undirected edge. Self-loops
// and repeated edges are dropped and counted in Stats; an id seen only in a
// self-loop is still a vertex.
//
// # Errors
//
// Every problem in the input is a *ParseError naming the input and the
// 1-based line number, wrapping one of this package's sentinel errors (or
// an I/O error). Parsers never panic on bad input.
package edgelist

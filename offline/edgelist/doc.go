// Package edgelist parses public edge-list formats into simple undirected
// graphs over dense vertex ids, and timestamped event lists into dense
// events.
//
// # Formats
//
//   - Snap: one edge per line, "u v [more columns]", fields separated by
//     spaces, tabs or commas (SNAP, KONECT, CSV). Lines starting with '#' or
//     '%' are comments. Ids are labels: any unsigned 64-bit decimal, 0 to
//     2^64−1; a negative id or a larger number is an error (ErrRange) naming
//     its line. The vertex set is every id that appears, including ids seen
//     only in self-loops. Before the first edge line, a line that is not an
//     edge and holds a word (a column header such as "fromNode,toNode", a
//     comment that lost its '#') is skipped, counted in
//     Stats.HeaderSkipped and listed in Skipped.HeaderLines; a line made
//     only of numbers is never skipped. After the first edge line a line
//     that does not parse is an error, unless Options.Lenient: then it is
//     skipped, counted in Stats.BadSkipped and quoted (the first few) in
//     Skipped.BadLines.
//   - MTX: MatrixMarket "coordinate" files. The size line "n n nnz" declares
//     n vertices (1-based ids); exactly nnz entries "i j [value...]" must
//     follow, each in range. A file without the %%MatrixMarket banner (its
//     first line that is not a comment is the size line) is read as
//     "coordinate pattern symmetric" and Graph.Notes says so; anything else
//     that cannot be a coordinate file (an array size line "n n", words,
//     a non-square matrix) is refused.
//   - LG: the Graphs.jl LG text format. The header "nv,ne,kind,name[,...]"
//     declares nv vertices (1-based ids); exactly ne lines "u,v" follow.
//   - GML: "graph [ node [ id N ... ] ... edge [ source A target B ... ] ]".
//     The node list declares the vertices (unsigned ids); an edge naming an
//     undeclared node is an error. Keys other than id, source and target
//     are ignored.
//   - Text: the untyped text stream format of package stream: a first line
//     "n m" declares n vertices (0-based ids), then exactly m "u v" lines.
//
// A declared vertex count must fit a stream's 32-bit count, at most
// 2^32−1; a larger one is an error (ErrRange) naming the line and the
// count. It is a claim, not a size: nothing is allocated or written per
// declared vertex, only per entry read (see Relabelling).
//
// Lines end at LF, CRLF or a lone CR (old Mac OS files), in every format.
// A header that declares vertices and no entries (MTX "5 5 0", LG "5,0,u,g",
// Text "5 0", a GML node list without edges) is a graph of isolated
// vertices; an input with no header, or no vertex at all, is an error.
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
// ascending order. Graph.WriteMap writes the new ids and the original
// ones.
//
// A declared range keeps every declared vertex, isolated ones included
// (they count as components), but holds no table of them: Graph.Original
// is nil, Graph.Components runs its union-find over the endpoints of the
// edges only when they are fewer than the vertices, and Graph.WriteMap
// lists only the vertices that have an edge; a vertex v < Vertices that
// it omits is isolated and had id Base+v. A header of 2^32−1 vertices and
// one edge so costs as little as one edge.
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

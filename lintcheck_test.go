package sketchcc

// The checks of the lint test (lint_test.go). Each returns findings; the
// test decides which an allow-list excuses.

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The size limits of issue 23 (must-show 3), for product code: non-test,
// non-generated files.
const (
	maxFileLines    = 600
	maxFuncLines    = 100
	maxStructFields = 12
)

// The checks, by the name the allow-list spells.
const (
	checkDoc          = "doc"
	checkUnused       = "unused"
	checkFlag         = "flag"
	checkSleep        = "sleep"
	checkFileLines    = "file-lines"
	checkFuncLines    = "func-lines"
	checkStructFields = "struct-fields"
)

var allChecks = []string{checkDoc, checkUnused, checkFlag, checkSleep, checkFileLines, checkFuncLines, checkStructFields}

// finding is one thing a check reports.
type finding struct {
	check string
	pos   token.Position // Filename relative to the module root
	ident string         // what the allow-list names: a word, an identifier, T.M, or "-" for a file
	msg   string
}

func (f finding) String() string { return fmt.Sprintf("%s:%d: %s", f.pos.Filename, f.pos.Line, f.msg) }

// lint runs every check over m.
func lint(m *module) []finding {
	var out []finding
	out = append(out, m.staleDocs()...)
	out = append(out, m.unusedExports()...)
	for _, p := range m.pkgs {
		for _, f := range p.files {
			out = append(out, m.flagStrings(p, f)...)
			out = append(out, m.sleeps(f)...)
			out = append(out, m.sizes(f)...)
		}
	}
	return out
}

func (m *module) finding(check string, pos token.Pos, ident, format string, args ...any) finding {
	p := m.fset.Position(pos)
	p.Filename = m.rel(p.Filename)
	return finding{check: check, pos: p, ident: ident, msg: fmt.Sprintf(format, args...)}
}

// ---- doc: doc comments that name identifiers that do not exist ----

var (
	// qualRE matches X.Y, X.Y.Z and (*X).Y.
	qualRE = regexp.MustCompile(`(?:\(\*?[A-Za-z_][A-Za-z0-9_]*\)|[A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*)+`)
	// bareRE matches a word with a capital, lower case, then an inner
	// capital: InsertBatch, WaitWorkers, ErrTicket.
	bareRE = regexp.MustCompile(`[A-Z][a-z0-9]+[A-Z][A-Za-z0-9_]*`)
)

// proseWords are words of bareRE's shape in prose that name no Go identifier:
// projects, people, formats, data sets, units.
var proseWords = map[string]bool{
	"GraphZeppelin": true, "GutterTree": true, "StreamingUtilities": true, "GraphStreamingProject": true,
	"GreedyCC": true, "VictoriaMetrics": true, "GitHub": true, "McGregor": true, "MatrixMarket": true,
	"CollegeMsg": true, "MiB": true, "GiB": true, "KiB": true, "TiB": true,
}

// fileExts are the last elements of X.Y that name a file, not a member.
var fileExts = map[string]bool{"go": true, "s": true, "txt": true, "md": true, "bin": true, "json": true,
	"map": true, "cum": true, "sh": true, "csv": true, "gz": true, "data": true, "mod": true, "sum": true,
	"out": true, "pprof": true, "prof": true, "yaml": true, "yml": true, "html": true, "svg": true, "png": true, "pdf": true}

// staleDocs reports words of doc comments (on a package, declaration,
// field or interface method, and the line comments of specs and fields)
// that name a Go identifier that does not exist:
//   - pkg.Name, where pkg is a package of the module (by the last element
//     of its path) or a package the file imports, Name is capitalised, and
//     pkg declares no Name, neither at package level nor as a method or
//     field (pkg.Method is short for pkg.Type.Method); for
//     pkg.Name.Member, Name has no Member;
//   - T.Member or (*T).Member, where T is a type of the comment's package
//     and has no method or field Member;
//   - a bare word of the shape InsertBatch (capital, lower case, inner
//     capital) that is no identifier anywhere in the module's code and
//     none declared by a package the file imports;
//   - as the first word of the doc comment of a package-level func, type,
//     const or var, another name: one of bareRE's shape, or one declared in
//     the package (the doc left behind by a rename or a move).
func (m *module) staleDocs() []finding {
	var out []finding
	for _, p := range m.pkgs {
		for _, f := range p.files {
			out = append(out, m.misnamedDocs(p, f)...)
			for _, cg := range docComments(f.ast) {
				for _, c := range cg.List {
					out = append(out, m.staleInComment(p, f, c)...)
				}
			}
		}
	}
	return out
}

var firstWordRE = regexp.MustCompile(`^// ([A-Za-z_][A-Za-z0-9_]*)\b`)

// misnamedDocs reports the package-level declarations of f whose doc
// comment starts with the name of another identifier.
func (m *module) misnamedDocs(p *srcPkg, f *srcFile) []finding {
	var out []finding
	for _, decl := range f.ast.Decls {
		var doc *ast.CommentGroup
		var name string
		switch d := decl.(type) {
		case *ast.FuncDecl:
			doc, name = d.Doc, d.Name.Name
		case *ast.GenDecl:
			if len(d.Specs) != 1 {
				continue
			}
			switch s := d.Specs[0].(type) {
			case *ast.TypeSpec:
				doc, name = d.Doc, s.Name.Name
			case *ast.ValueSpec:
				if len(s.Names) == 1 {
					doc, name = d.Doc, s.Names[0].Name
				}
			}
		}
		if doc == nil {
			continue
		}
		sm := firstWordRE.FindStringSubmatch(doc.List[0].Text)
		if sm == nil || sm[1] == name {
			continue
		}
		if w := sm[1]; bareRE.FindString(w) == w || p.decl.top[w] || p.decl.anyMember(w) {
			out = append(out, m.finding(checkDoc, doc.Pos(), name,
				"the doc comment of %s starts with %s, another name: start it with %s", name, w, name))
		}
	}
	return out
}

// docComments returns f's doc comments and the line comments of its specs
// and fields.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cgs ...*ast.CommentGroup) {
		for _, cg := range cgs {
			if cg != nil {
				out = append(out, cg)
			}
		}
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			add(n.Doc)
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.TypeSpec:
			add(n.Doc, n.Comment)
		case *ast.ValueSpec:
			add(n.Doc, n.Comment)
		case *ast.Field:
			add(n.Doc, n.Comment)
		}
		return true
	})
	return out
}

func (m *module) staleInComment(p *srcPkg, f *srcFile, c *ast.Comment) []finding {
	text := c.Text
	if strings.HasPrefix(text, "//") && !strings.HasPrefix(text, "// ") && !strings.HasPrefix(text, "//\t") {
		return nil // a directive (//go:build, //nolint) or an empty line
	}
	var out []finding
	report := func(at int, word, format string, args ...any) {
		pos := c.Slash + token.Pos(at)
		out = append(out, m.finding(checkDoc, pos, word, "doc comment names %s, "+format, append([]any{word}, args...)...))
	}
	var spans [][2]int
	for _, loc := range qualRE.FindAllStringIndex(text, -1) {
		if !wordBounded(text, loc[0], loc[1]) {
			continue
		}
		spans = append(spans, [2]int{loc[0], loc[1]})
		word := text[loc[0]:loc[1]]
		if why := m.staleQualified(p, f, word); why != "" {
			report(loc[0], word, "%s", why)
		}
	}
	for _, loc := range bareRE.FindAllStringIndex(text, -1) {
		if !wordBounded(text, loc[0], loc[1]) || slices.ContainsFunc(spans, func(s [2]int) bool { return loc[0] >= s[0] && loc[1] <= s[1] }) {
			continue
		}
		word := text[loc[0]:loc[1]]
		if !m.isIdent(word) && !proseWords[word] && !m.importsDeclare(f, word) && !quoted(text, loc[0]) {
			report(loc[0], word, "which is no identifier of this module or of a package %s imports", path.Base(f.path))
		}
	}
	return out
}

// isIdent reports whether word is an identifier of the module's code, the
// name of a test, benchmark, fuzz target or example without its prefix
// (-bench=WireWorker), or the plural of an identifier (MemberEvents).
func (m *module) isIdent(word string) bool {
	for _, prefix := range []string{"", "Test", "Benchmark", "Fuzz", "Example"} {
		if m.idents[prefix+word] {
			return true
		}
	}
	w, ok := strings.CutSuffix(word, "s")
	return ok && m.idents[w]
}

// quoted reports whether text[i] is inside double quotes on its line: a
// string value ("NoSuchEntity"), not a Go name.
func quoted(text string, i int) bool {
	line := text[strings.LastIndexByte(text[:i], '\n')+1 : i]
	return strings.Count(line, `"`)%2 == 1
}

// wordBounded reports whether text[i:j] stands alone: not part of a path,
// a URL, a flag or a longer word.
func wordBounded(text string, i, j int) bool {
	inWord := func(r byte) bool {
		return r == '_' || r == '/' || r == '-' || r == '@' || r == '.' || r == '\\' ||
			r < 0x80 && (unicode.IsLetter(rune(r)) || unicode.IsDigit(rune(r)))
	}
	if i > 0 && inWord(text[i-1]) {
		return false
	}
	if j < len(text) && text[j] != '.' && inWord(text[j]) {
		return false
	}
	// A trailing '.' ends a sentence, unless a word follows it (a path).
	return j+1 >= len(text) || text[j] != '.' || !inWord(text[j+1]) || text[j+1] == '.'
}

// staleQualified returns why word (X.Y…) names nothing, or "".
func (m *module) staleQualified(p *srcPkg, f *srcFile, word string) string {
	parts := strings.Split(strings.NewReplacer("(", "", ")", "", "*", "").Replace(word), ".")
	x, y := parts[0], parts[1]
	if fileExts[parts[len(parts)-1]] {
		return ""
	}
	if p.decl.types[x] {
		if !p.decl.hasMember(x, y) {
			return fmt.Sprintf("but %s has no method or field %s", x, y)
		}
		return ""
	}
	if !startsUpper(y) {
		return ""
	}
	var known bool // x is a package
	for _, q := range m.byName[x] {
		known = true
		if q.decl.top[y] && (len(parts) < 3 || !q.decl.types[y] || q.decl.hasMember(y, parts[2])) {
			return ""
		}
		if len(parts) == 2 && q.decl.anyMember(y) {
			return "" // pkg.Method, short for pkg.Type.Method
		}
	}
	if ip, ok := f.imports[x]; ok && m.imported[ip] != nil {
		known = true
		obj := m.imported[ip].Scope().Lookup(y)
		if obj != nil && (len(parts) < 3 || hasTypeMember(obj, parts[2])) {
			return ""
		}
		if len(parts) == 2 && packageNames(m.imported[ip])[y] {
			return ""
		}
	}
	if !known {
		return ""
	}
	if len(parts) > 2 {
		return fmt.Sprintf("but package %s declares no %s with a member %s", x, y, parts[2])
	}
	return fmt.Sprintf("but package %s declares no %s", x, y)
}

// hasTypeMember reports whether obj is not a type, or a type with a
// method or field name.
func hasTypeMember(obj types.Object, name string) bool {
	tn, ok := obj.(*types.TypeName)
	if !ok {
		return true
	}
	o, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, tn.Pkg(), name)
	return o != nil
}

// importsDeclare reports whether a package f imports declares word at
// package level or as a method or field of one of its types.
func (m *module) importsDeclare(f *srcFile, word string) bool {
	for _, ip := range f.imports {
		if p := m.imported[ip]; p != nil && packageNames(p)[word] {
			return true
		}
	}
	return false
}

var packageNamesCache = map[*types.Package]map[string]bool{}

func packageNames(p *types.Package) map[string]bool {
	if names, ok := packageNamesCache[p]; ok {
		return names
	}
	names := map[string]bool{}
	for _, n := range p.Scope().Names() {
		names[n] = true
		tn, ok := p.Scope().Lookup(n).(*types.TypeName)
		if !ok {
			continue
		}
		ms := types.NewMethodSet(types.NewPointer(tn.Type()))
		for i := range ms.Len() {
			names[ms.At(i).Obj().Name()] = true
		}
		switch u := tn.Type().Underlying().(type) {
		case *types.Struct:
			for i := range u.NumFields() {
				names[u.Field(i).Name()] = true
			}
		case *types.Interface:
			for i := range u.NumMethods() {
				names[u.Method(i).Name()] = true
			}
		}
	}
	packageNamesCache[p] = names
	return names
}

func startsUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

// ---- unused: exports with no non-test user ----

// implicitMethods are method names the standard library calls through
// interfaces it never names (errors.Is, errors.As, errors.Unwrap).
var implicitMethods = map[string]bool{"Unwrap": true, "Is": true, "As": true}

// unusedExports reports exported package-level funcs, types, consts and
// vars and exported methods of the module's non-main packages that no
// non-test code of the module refers to outside their own declaration.
// A method is exempt when its type satisfies an interface that has it
// (any interface of the build's packages, named or written in the
// module's code), or when implicitMethods has its name. A name spelled in
// a non-test file of another build (a build tag) counts as used. A
// package that no non-test file imports (test support, like
// internal/testgraph) is for tests: there a name that the tests of other
// packages select counts as used.
func (m *module) unusedExports() []finding {
	own := m.ownDecls()
	support := m.testSupportUses()
	used := map[types.Object]bool{}
	for _, p := range m.pkgs {
		if p.info == nil {
			continue
		}
		for id, obj := range p.info.Uses {
			obj = origin(obj)
			if !slices.ContainsFunc(own[obj], func(n ast.Node) bool { return n.Pos() <= id.Pos() && id.Pos() < n.End() }) {
				used[obj] = true
			}
		}
	}
	for obj := range m.interfaceMethods() {
		used[obj] = true
	}
	var out []finding
	report := func(obj types.Object, name string) {
		uses, isSupport := support[obj.Pkg().Path()]
		if !used[obj] && !m.unbuilt[obj.Name()] && !uses[obj.Name()] {
			if isSupport {
				out = append(out, m.finding(checkUnused, obj.Pos(), name,
					"%s is exported by a test-support package but no test of another package uses it: delete it", name))
				return
			}
			out = append(out, m.finding(checkUnused, obj.Pos(), name,
				"%s is exported but no non-test code refers to it: unexport it, move it to an export_test.go, or delete it", name))
		}
	}
	for _, p := range m.pkgs {
		if p.types == nil || p.name == "main" {
			continue
		}
		scope := p.types.Scope()
		for _, n := range scope.Names() {
			obj := scope.Lookup(n)
			if obj.Exported() {
				report(obj, n)
			}
			tn, ok := obj.(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			if named, ok := tn.Type().(*types.Named); ok {
				for i := range named.NumMethods() {
					if fn := named.Method(i); fn.Exported() && !implicitMethods[fn.Name()] {
						report(fn, n+"."+fn.Name())
					}
				}
			}
		}
	}
	return out
}

// testSupportUses returns, for each module package that no non-test file
// imports, the names selected in the test files of other packages that
// import it: pkg.Name, and x.Name on any x, for methods.
func (m *module) testSupportUses() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, p := range m.pkgs {
		out[p.importPath] = map[string]bool{}
	}
	for _, p := range m.pkgs {
		for _, f := range p.files {
			if !f.test {
				for _, ip := range f.imports {
					delete(out, ip)
				}
			}
		}
	}
	for _, p := range m.pkgs {
		for _, f := range p.files {
			var into []map[string]bool
			for _, ip := range f.imports {
				if uses, ok := out[ip]; ok && f.test && ip != p.importPath {
					into = append(into, uses)
				}
			}
			if len(into) == 0 {
				continue
			}
			ast.Inspect(f.ast, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					for _, uses := range into {
						uses[sel.Sel.Name] = true
					}
				}
				return true
			})
		}
	}
	return out
}

func origin(obj types.Object) types.Object {
	switch o := obj.(type) {
	case *types.Func:
		return o.Origin()
	case *types.Var:
		return o.Origin()
	}
	return obj
}

// ownDecls maps each package-level object of the module to the syntax
// that declares it, where a reference does not count as a use: a func's
// whole declaration, a type's spec and its methods' receivers, a value's
// spec.
func (m *module) ownDecls() map[types.Object][]ast.Node {
	own := map[types.Object][]ast.Node{}
	for _, p := range m.pkgs {
		if p.info == nil {
			continue
		}
		for _, f := range p.files {
			if !f.built {
				continue
			}
			for _, decl := range f.ast.Decls {
				switch decl := decl.(type) {
				case *ast.FuncDecl:
					obj := p.info.Defs[decl.Name]
					own[obj] = append(own[obj], decl)
					if decl.Recv != nil {
						if tn := p.types.Scope().Lookup(recvName(decl)); tn != nil {
							own[tn] = append(own[tn], decl.Recv)
						}
					}
				case *ast.GenDecl:
					for _, spec := range decl.Specs {
						switch spec := spec.(type) {
						case *ast.TypeSpec:
							own[p.info.Defs[spec.Name]] = append(own[p.info.Defs[spec.Name]], spec)
						case *ast.ValueSpec:
							for _, n := range spec.Names {
								own[p.info.Defs[n]] = append(own[p.info.Defs[n]], spec)
							}
						}
					}
				}
			}
		}
	}
	return own
}

// interfaceMethods returns the methods of the module's package-level
// types that satisfy an interface having them.
func (m *module) interfaceMethods() map[types.Object]bool {
	var ifaces []*types.Interface
	add := func(t types.Type) {
		if i, ok := t.Underlying().(*types.Interface); ok && i.NumMethods() > 0 && !i.IsImplicit() {
			ifaces = append(ifaces, i)
		}
	}
	add(types.Universe.Lookup("error").Type())
	for _, p := range m.imported {
		if p == nil {
			continue
		}
		for _, n := range p.Scope().Names() {
			if tn, ok := p.Scope().Lookup(n).(*types.TypeName); ok {
				if named, ok := tn.Type().(*types.Named); !ok || named.TypeParams().Len() == 0 {
					add(tn.Type())
				}
			}
		}
	}
	for _, p := range m.pkgs {
		if p.info != nil {
			for _, tv := range p.info.Types {
				if _, ok := tv.Type.(*types.Interface); ok && tv.IsType() {
					add(tv.Type)
				}
			}
		}
	}
	out := map[types.Object]bool{}
	for _, p := range m.pkgs {
		if p.types == nil {
			continue
		}
		for _, n := range p.types.Scope().Names() {
			tn, ok := p.types.Scope().Lookup(n).(*types.TypeName)
			if !ok {
				continue
			}
			named, ok := tn.Type().(*types.Named)
			if !ok || named.TypeParams().Len() > 0 || types.IsInterface(named) {
				continue
			}
			for _, t := range []types.Type{named, types.NewPointer(named)} {
				markSatisfied(t, ifaces, out)
			}
		}
	}
	return out
}

// markSatisfied marks the methods of t that implement an interface of
// ifaces that t satisfies.
func markSatisfied(t types.Type, ifaces []*types.Interface, out map[types.Object]bool) {
	ms := types.NewMethodSet(t)
	if ms.Len() == 0 {
		return
	}
	for _, i := range ifaces {
		if i.NumMethods() > ms.Len() {
			continue
		}
		m0 := i.Method(0)
		if ms.Lookup(m0.Pkg(), m0.Name()) == nil || !types.Implements(t, i) {
			continue
		}
		for k := range i.NumMethods() {
			im := i.Method(k)
			if sel := ms.Lookup(im.Pkg(), im.Name()); sel != nil {
				out[origin(sel.Obj())] = true
			}
		}
	}
}

// ---- flag: command-line flags spelled in libraries ----

// flagRE matches a command-line flag's spelling: --name.
var flagRE = regexp.MustCompile(`(?:^|[^-\w])(--[A-Za-z][A-Za-z0-9-]*)`)

// flagStrings reports string literals spelling a --flag in the non-test
// files of library packages: not package main, not below cmd/ or
// scripts/. A library's messages name its Config fields; cmd maps them to
// flags.
func (m *module) flagStrings(p *srcPkg, f *srcFile) []finding {
	if f.test || p.name == "main" || strings.HasPrefix(f.path, "cmd/") || strings.HasPrefix(f.path, "scripts/") {
		return nil
	}
	var out []finding
	ast.Inspect(f.ast, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		for _, sm := range flagRE.FindAllStringSubmatch(s, -1) {
			out = append(out, m.finding(checkFlag, lit.Pos(), sm[1],
				"library string spells the flag %s: name the Config field, and let cmd/ map it to its flag", sm[1]))
		}
		return true
	})
	return out
}

// ---- sleep: time.Sleep in tests ----

// sleeps reports calls of time.Sleep in test files, by the function they
// are in. Tests wait for a condition (a poll helper, a channel) or run in
// a testing/synctest bubble.
func (m *module) sleeps(f *srcFile) []finding {
	if !f.test {
		return nil
	}
	timePkg := ""
	for name, ip := range f.imports {
		if ip == "time" {
			timePkg = name
		}
	}
	if timePkg == "" {
		return nil
	}
	var out []finding
	for _, decl := range f.ast.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		ast.Inspect(fd, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sleep" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == timePkg {
					out = append(out, m.finding(checkSleep, sel.Pos(), funcName(fd),
						"%s sleeps: wait for the condition (a poll helper, a channel) or use testing/synctest", funcName(fd)))
				}
			}
			return true
		})
	}
	return out
}

// ---- sizes: files, functions and structs of product code ----

// sizes reports, in a non-test, non-generated file: the file over
// maxFileLines lines, functions over maxFuncLines lines (from func to the
// closing brace), and struct types with more than maxStructFields fields.
func (m *module) sizes(f *srcFile) []finding {
	if f.test || ast.IsGenerated(f.ast) {
		return nil
	}
	var out []finding
	tf := m.fset.File(f.ast.Pos())
	if n := tf.LineCount(); n > maxFileLines {
		out = append(out, m.finding(checkFileLines, f.ast.Package, "-", "file has %d lines, over %d: split it", n, maxFileLines))
	}
	lines := func(n ast.Node) int { return tf.Line(n.End()) - tf.Line(n.Pos()) + 1 }
	for _, decl := range f.ast.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok && lines(fd) > maxFuncLines {
			out = append(out, m.finding(checkFuncLines, fd.Pos(), funcName(fd),
				"%s has %d lines, over %d: split it", funcName(fd), lines(fd), maxFuncLines))
		}
	}
	for name, st := range structTypes(tf, f.ast) {
		n := 0
		for _, fl := range st.Fields.List {
			n += max(1, len(fl.Names))
		}
		if n > maxStructFields {
			out = append(out, m.finding(checkStructFields, st.Pos(), name,
				"struct %s has %d fields, over %d: group them, or allow-list it as a plain record", name, n, maxStructFields))
		}
	}
	return out
}

// structTypes returns the struct types of f by a name: T for type T, T.f
// for the struct type of T's field f, F.T for type T declared in func F,
// F.struct@line for a struct type literal in func F.
func structTypes(tf *token.File, f *ast.File) map[string]*ast.StructType {
	out := map[string]*ast.StructType{}
	join := func(scope, name string) string {
		if scope == "" {
			return name
		}
		return scope + "." + name
	}
	var visit func(scope string, n ast.Node)
	var record func(name string, st *ast.StructType)
	record = func(name string, st *ast.StructType) {
		out[name] = st
		for _, fl := range st.Fields.List {
			if inner, ok := unstar(fl.Type).(*ast.StructType); ok && len(fl.Names) > 0 {
				record(name+"."+fl.Names[0].Name, inner)
			} else {
				visit(name, fl.Type)
			}
		}
	}
	visit = func(scope string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok {
					record(join(scope, n.Name.Name), st)
					return false
				}
			case *ast.StructType:
				record(join(scope, fmt.Sprintf("struct@%d", tf.Line(n.Pos()))), n)
				return false
			}
			return true
		})
	}
	for _, decl := range f.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok {
			visit(funcName(fd), fd)
		} else {
			visit("", decl)
		}
	}
	return out
}

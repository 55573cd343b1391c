package sketchcc

// The loader of the lint test (lint_test.go): every .go file of a module
// parsed, and its packages type-checked from source against the export
// data that `go list -export` names for their dependencies.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// srcFile is one parsed .go file of the module.
type srcFile struct {
	path    string            // relative to the module root, slash-separated
	ast     *ast.File         // with comments
	test    bool              // a _test.go file
	built   bool              // type-checked: in the default build and not a test
	imports map[string]string // local name → import path (no blank or dot imports)
}

// srcPkg is the .go files of one directory of the module.
type srcPkg struct {
	dir        string // relative to the module root, slash-separated; "." for the root
	importPath string
	name       string // the package clause of its non-test files
	files      []*srcFile
	types      *types.Package // nil when the directory has no non-test file
	info       *types.Info
	decl       *declIndex
}

// module is a loaded module: its packages and every package they import.
type module struct {
	root, path string
	fset       *token.FileSet
	pkgs       []*srcPkg            // in dependency order (go list -deps)
	byName     map[string][]*srcPkg // by the last element of the import path
	imported   map[string]*types.Package
	idents     map[string]bool // every identifier spelled in the module's code
	unbuilt    map[string]bool // every identifier of a non-test file left out of the build (tags)
}

// listed is the part of `go list -json` the loader reads.
type listed struct {
	ImportPath, Dir, Export, Name string
	GoFiles, CgoFiles             []string
	Standard                      bool
	Module                        *struct{ Main bool }
	Error                         *struct{ Err string }
}

// loadModule parses every .go file below root (skipping .git, testdata,
// hidden directories and nested modules) and type-checks the module's
// packages. It returns an error when the module does not type-check.
func loadModule(root string) (*module, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	m := &module{root: root, fset: token.NewFileSet(), byName: map[string][]*srcPkg{},
		imported: map[string]*types.Package{}, idents: map[string]bool{}, unbuilt: map[string]bool{}}
	if m.path, err = modulePath(filepath.Join(root, "go.mod")); err != nil {
		return nil, err
	}
	dirs, err := m.parseTree()
	if err != nil {
		return nil, err
	}
	list, err := goList(root)
	if err != nil {
		return nil, err
	}
	if err := m.check(list, dirs); err != nil {
		return nil, err
	}
	for _, p := range m.pkgs {
		p.decl = indexDecls(p.files)
		m.byName[path.Base(p.importPath)] = append(m.byName[path.Base(p.importPath)], p)
		for _, f := range p.files {
			ast.Inspect(f.ast, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					m.idents[id.Name] = true
					if !f.test && !f.built {
						m.unbuilt[id.Name] = true
					}
				}
				return true
			})
		}
	}
	return m, nil
}

func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(p), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// parseTree parses the module's .go files, grouped by directory.
func (m *module) parseTree() (map[string]*srcPkg, error) {
	dirs := map[string]*srcPkg{}
	err := filepath.WalkDir(m.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != m.root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); p != m.root && err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		af, err := parser.ParseFile(m.fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel := m.rel(p)
		dir := path.Dir(rel)
		sp := dirs[dir]
		if sp == nil {
			sp = &srcPkg{dir: dir}
			dirs[dir] = sp
		}
		f := &srcFile{path: rel, ast: af, test: strings.HasSuffix(p, "_test.go"), imports: map[string]string{}}
		for _, im := range af.Imports {
			ip := strings.Trim(im.Path.Value, `"`)
			name := path.Base(ip)
			if im.Name != nil {
				name = im.Name.Name
			}
			if name != "_" && name != "." {
				f.imports[name] = ip
			}
		}
		sp.files = append(sp.files, f)
		return nil
	})
	return dirs, err
}

// rel returns the slash path of file name relative to the module root.
func (m *module) rel(name string) string {
	r, err := filepath.Rel(m.root, name)
	if err != nil {
		return filepath.ToSlash(name)
	}
	return filepath.ToSlash(r)
}

// goList runs `go list -export -deps` over the module's packages: every
// package of the build in dependency order, with its export data.
func goList(root string) ([]listed, error) {
	cmd := exec.Command("go", "list", "-e", "-export", "-deps",
		"-json=ImportPath,Dir,Export,Name,GoFiles,CgoFiles,Standard,Module,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, stderr.Bytes())
	}
	var list []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			return list, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		if l.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", l.ImportPath, l.Error.Err)
		}
		list = append(list, l)
	}
}

// check type-checks the module's packages from source, in dependency
// order, and imports every other package from its export data.
func (m *module) check(list []listed, dirs map[string]*srcPkg) error {
	exports := map[string]string{}
	for _, l := range list {
		exports[l.ImportPath] = l.Export
	}
	gc := importer.ForCompiler(m.fset, "gc", func(ip string) (io.ReadCloser, error) {
		if exports[ip] == "" {
			return nil, fmt.Errorf("no export data for %s", ip)
		}
		return os.Open(exports[ip])
	})
	imp := importerFunc(func(ip string) (*types.Package, error) {
		if p := m.imported[ip]; p != nil {
			return p, nil
		}
		p, err := gc.Import(ip)
		if err == nil {
			m.imported[ip] = p
		}
		return p, err
	})
	var errs []error
	for _, l := range list {
		if l.Module == nil || !l.Module.Main {
			if _, err := imp.Import(l.ImportPath); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		sp := dirs[m.rel(l.Dir)]
		if sp == nil {
			return fmt.Errorf("go list names %s, which the walk did not find", l.Dir)
		}
		sp.importPath, sp.name = l.ImportPath, l.Name
		m.pkgs = append(m.pkgs, sp)
		built := append(slices.Clone(l.GoFiles), l.CgoFiles...)
		var files []*ast.File
		for _, f := range sp.files {
			if slices.Contains(built, path.Base(f.path)) {
				f.built = true
				files = append(files, f.ast)
			}
		}
		if len(files) == 0 {
			continue
		}
		sp.info = &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{},
			Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err) }}
		sp.types, _ = conf.Check(l.ImportPath, m.fset, files, sp.info)
		m.imported[l.ImportPath] = sp.types
	}
	return errors.Join(errs...)
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// declIndex is the names a package declares, read from all its files
// (tests and files of other builds included), for the doc check.
type declIndex struct {
	top     map[string]bool            // package-level names
	types   map[string]bool            // package-level type names
	members map[string]map[string]bool // type → its methods, fields and interface methods
	embeds  map[string][]string        // type → the types of this package it embeds
	open    map[string]bool            // types with members declared elsewhere (embedding another package's type, aliases, defined over another type)
}

func indexDecls(files []*srcFile) *declIndex {
	d := &declIndex{top: map[string]bool{}, types: map[string]bool{}, members: map[string]map[string]bool{},
		embeds: map[string][]string{}, open: map[string]bool{}}
	member := func(t, name string) {
		if d.members[t] == nil {
			d.members[t] = map[string]bool{}
		}
		d.members[t][name] = true
	}
	for _, f := range files {
		for _, decl := range f.ast.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					d.top[decl.Name.Name] = true
				} else {
					member(recvName(decl), decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							d.top[n.Name] = true
						}
					case *ast.TypeSpec:
						d.indexType(spec, member)
					}
				}
			}
		}
	}
	return d
}

func (d *declIndex) indexType(spec *ast.TypeSpec, member func(t, name string)) {
	t := spec.Name.Name
	d.top[t], d.types[t] = true, true
	if spec.Assign != 0 {
		d.open[t] = true
		return
	}
	var fields []*ast.Field
	switch u := spec.Type.(type) {
	case *ast.StructType:
		fields = u.Fields.List
	case *ast.InterfaceType:
		fields = u.Methods.List
	case *ast.Ident, *ast.SelectorExpr, *ast.IndexExpr:
		d.open[t] = true
	}
	for _, fl := range fields {
		for _, n := range fl.Names {
			member(t, n.Name)
		}
		if len(fl.Names) > 0 {
			continue
		}
		switch e := unstar(fl.Type).(type) {
		case *ast.Ident:
			member(t, e.Name)
			d.embeds[t] = append(d.embeds[t], e.Name)
		case *ast.SelectorExpr:
			member(t, e.Sel.Name)
			d.open[t] = true
		default:
			d.open[t] = true // a constraint's terms, an instantiated generic type
		}
	}
}

// hasMember reports whether type t of this package has method or field
// name, or might have it (an embedded type of another package).
func (d *declIndex) hasMember(t, name string) bool {
	seen := map[string]bool{}
	var has func(t string) bool
	has = func(t string) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		if d.members[t][name] || d.open[t] {
			return true
		}
		return slices.ContainsFunc(d.embeds[t], has)
	}
	return has(t)
}

// anyMember reports whether some type of this package has a method or
// field name.
func (d *declIndex) anyMember(name string) bool {
	for _, ms := range d.members {
		if ms[name] {
			return true
		}
	}
	return false
}

func unstar(e ast.Expr) ast.Expr {
	if s, ok := e.(*ast.StarExpr); ok {
		return s.X
	}
	return e
}

// recvName is the receiver's type name of method fd.
func recvName(fd *ast.FuncDecl) string {
	e := unstar(fd.Recv.List[0].Type)
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// funcName is fd's name as the allow-list spells it: F, or T.M for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil {
		return fd.Name.Name
	}
	return recvName(fd) + "." + fd.Name.Name
}

// readAllow reads an allow-list: one entry a line, `check path identifier
// # reason`, blank lines and lines starting with # ignored.
func readAllow(name string) ([]allowEntry, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []allowEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		entry, reason, _ := strings.Cut(line, "#")
		f := strings.Fields(entry)
		if len(f) != 3 || strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: want `check path identifier  # reason`, have %q", name, n, line)
		}
		out = append(out, allowEntry{check: f[0], path: f[1], ident: f[2], line: n})
	}
	return out, sc.Err()
}

type allowEntry struct {
	check, path, ident string
	line               int // in the allow-list file
}

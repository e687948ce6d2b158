// lean_testify removes testify's HTTP assertions from a copy of its assert package, in place.
//
// Usage: go run lean_testify.go DIR   (DIR: the copy's assert directory)
//
// The HTTP assertions are the only reason assert imports net/http, and net/http brings about
// eighty packages (TLS, x509, mime, ...) into every HumanEval-X test binary the linker has to
// read. No HumanEval-X test calls them; the runner links a program that mentions "HTTP" against
// the full package instead. Every other declaration is kept as it is: it is reprinted from the
// syntax tree, so only the dropped functions and imports differ from upstream.
package main

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Imports only the HTTP assertions use; any other user keeps them.
var httpOnly = map[string]bool{"net/http": true, "net/http/httptest": true, "net/url": true}

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: lean_testify ASSERT_DIR"))
	}
	dir := os.Args[1]
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		fail(err)
	}
	dropped := 0
	for _, name := range names {
		base := filepath.Base(name)
		// Tests are not built; http_assertions.go holds nothing but the HTTP assertions.
		if strings.HasSuffix(base, "_test.go") || base == "http_assertions.go" {
			if err := os.Remove(name); err != nil {
				fail(err)
			}
			continue
		}
		n, err := lean(name)
		if err != nil {
			fail(err)
		}
		dropped += n
	}
	if dropped == 0 {
		// Upstream renamed or moved them: better no lean package than a wrong one.
		fail(fmt.Errorf("no HTTP assertion found in %s", dir))
	}
}

func lean(name string) (int, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
	if err != nil {
		return 0, err
	}
	kept := file.Decls[:0]
	var gone [][2]token.Pos
	for _, decl := range file.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "HTTP") {
			start := fn.Pos()
			if fn.Doc != nil {
				start = fn.Doc.Pos()
			}
			gone = append(gone, [2]token.Pos{start, fn.End()})
			continue
		}
		kept = append(kept, decl)
	}
	if len(gone) == 0 {
		return 0, nil
	}
	file.Decls = kept
	// The dropped functions' comments go with them (else the printer floats them into what is
	// kept); every other comment, directives included, stays.
	comments := file.Comments[:0]
	for _, group := range file.Comments {
		inside := false
		for _, span := range gone {
			inside = inside || (group.Pos() >= span[0] && group.End() <= span[1])
		}
		if !inside {
			comments = append(comments, group)
		}
	}
	file.Comments = comments
	used := map[string]bool{}
	ast.Inspect(file, func(node ast.Node) bool {
		if sel, ok := node.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.IMPORT {
			continue
		}
		specs := gen.Specs[:0]
		for _, spec := range gen.Specs {
			imp := spec.(*ast.ImportSpec)
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return 0, err
			}
			local := filepath.Base(path)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			if httpOnly[path] && !used[local] {
				continue
			}
			specs = append(specs, spec)
		}
		gen.Specs = specs
	}
	out, err := os.Create(name)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	return len(gone), format.Node(out, fset, file)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "lean_testify:", err)
	os.Exit(1)
}

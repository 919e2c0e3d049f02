package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docFiles are the documents TestDocs reads: the README, BENCHMARKS.md
// and every guide in docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(guides) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	return append([]string{"../../README.md", "../../BENCHMARKS.md"}, guides...)
}

var (
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	weaveLine = regexp.MustCompile(`(?:^|[\s"'(=;])weave ((?:[^\s"'` + "`" + `#)]|#[^ ])+(?: +(?:[^\s"'` + "`" + `#)]|#[^ ])+)*)`)
	envVar    = regexp.MustCompile(`\bWEAVE_[A-Z0-9_]*[A-Z0-9]\b`)
	mdLink    = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
)

// docCode returns the code of a markdown document: its code blocks'
// lines (less shell comments) and its inline code spans.
func docCode(text string) []string {
	var code []string
	var prose strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if in || strings.HasPrefix(line, "    ") {
			if i := strings.Index(line, "  #"); i >= 0 {
				line = line[:i]
			}
			code = append(code, line)
			continue
		}
		prose.WriteString(line + "\n")
	}
	for _, m := range codeSpan.FindAllStringSubmatch(prose.String(), -1) {
		code = append(code, strings.ReplaceAll(m[1], "\n", " "))
	}
	return code
}

// TestDocs: what the README and the guides name exists. Every `weave
// COMMAND` is a command of weave's, every --flag written after it is one
// of that command's flags, every WEAVE_ variable is read by some source
// file, and every relative link leads to a file.
func TestDocs(t *testing.T) {
	app := newApp()
	flagsOf := map[string][]string{}
	for _, c := range app.Commands {
		names := []string{"help"}
		for _, f := range c.Flags {
			names = append(names, f.Names()...)
		}
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			flagsOf[n] = names
		}
	}
	weaveFlags := []string{"frames", "alloc", "calloc", "realloc", "free", "exclude", "include", "exclude-file", "help", "version", "weave-verbose"}
	flagsOf[""] = append(weaveFlags, "std", "ansi")
	flagsOf["cc"] = weaveFlags
	flagsOf["go"] = []string{"packages", "frames", "help"}
	flagsOf["toolexec"] = []string{"packages", "help"}
	sources := allSources(t)
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(doc, "../../")
		for _, code := range docCode(string(b)) {
			for _, m := range weaveLine.FindAllStringSubmatch(code, -1) {
				checkDocCommand(t, name, m[1], flagsOf)
			}
		}
		for _, v := range envVar.FindAllString(string(b), -1) {
			if !strings.Contains(sources, v) {
				t.Errorf("%s: %s is read by no source file", name, v)
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), m[1])); err != nil {
				t.Errorf("%s: link to %s: %v", name, m[1], err)
			}
		}
	}
}

// checkDocCommand checks one documented weave command line (the words
// after "weave").
func checkDocCommand(t *testing.T, doc, line string, flagsOf map[string][]string) {
	t.Helper()
	words := strings.Fields(line)
	cmd := ""
	first := strings.Trim(words[0], "[]")
	switch {
	case flagsOf[first] != nil:
		cmd, words = first, words[1:]
	case regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(first) && !isCompiler(first):
		t.Errorf("%s: `weave %s`: weave has no command %q", doc, line, first)
		return
	}
	for _, w := range words {
		w = strings.Trim(w, "[](),.")
		if w == "--" {
			break
		}
		if !strings.HasPrefix(w, "--") {
			continue
		}
		flag, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if i := strings.IndexAny(flag, "|]"); i >= 0 {
			flag = flag[:i]
		}
		if !slices.Contains(flagsOf[cmd], flag) {
			t.Errorf("%s: `weave %s`: weave %s has no flag --%s", doc, line, cmd, flag)
		}
	}
}

// allSources is the text of every Go and C source of the module, where
// the WEAVE_ variables the documents name must be read.
func allSources(t *testing.T) string {
	var sb strings.Builder
	filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(p); !d.IsDir() && (ext == ".go" || ext == ".c" || ext == ".h") && !strings.HasSuffix(p, "_test.go") {
			b, _ := os.ReadFile(p)
			sb.Write(b)
		}
		return nil
	})
	return sb.String()
}

// TestReadmeDemo: the output the README shows is make demo's: the
// summary lines (but the pid) and the leak table's rows are what the
// widgets example prints and reports now.
func TestReadmeDemo(t *testing.T) {
	dir, env := widgetsDir(t)
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-g", "-o", "widgets", "widgets.c")
	r := mustRun(t, dir, []string{"WEAVE_OUT=widgets.prof"}, "./widgets", "100000")
	got := regexp.MustCompile(`==weave \d+==`).ReplaceAllString(r.stderr, "==weave==") +
		mustRun(t, dir, nil, weaveBin, "report", "widgets.prof").stdout
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var shown int
	for _, line := range strings.Split(string(readme), "\n") {
		line = regexp.MustCompile(`==weave \d+==`).ReplaceAllString(line, "==weave==")
		if !strings.HasPrefix(line, "==weave==") && !regexp.MustCompile(`^[\d,]+ +[\d.]+ +[\d,]+ +\w+ `).MatchString(line) {
			continue
		}
		shown++
		line = strings.ReplaceAll(line, "testdata/widgets.c", "widgets.c")
		if !strings.Contains(got, strings.TrimRight(line, " ")) {
			t.Errorf("README shows %q; make demo's output has no such line", line)
		}
	}
	if shown < 10 {
		t.Errorf("README shows %d lines of make demo's output, want the summary and a table", shown)
	}
}

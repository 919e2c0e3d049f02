package runtime

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weave-profiler/weave/internal/cachedir"
	"github.com/weave-profiler/weave/internal/replacefile"
)

// The dynamic list of a runtime object: the linker input that makes an
// executable export the runtime's symbols (so that the woven libraries
// it loads bind to its copy). Written as the pattern "__weave_*", it cost
// GNU ld 17.4M instructions a link of a small program (its 48.6M
// without the runtime): ld matches every symbol of the link, libc's too,
// against it with fnmatch, which under a UTF-8 locale converts each to
// wide characters. The same symbols listed by name cost 8.8M (a hash
// lookup each). The list is written once per object, beside it in the
// cache (rt-HASH.dynlist), and pruned with it.

// DynamicList returns the dynamic list file of the runtime object obj
// (Object's result): `{ name; ... };` naming each __weave_* symbol obj
// defines and an executable exports, as the pattern "__weave_*" would.
// It is made on first use; an error means obj could not be read as ELF.
func DynamicList(obj string) (string, error) {
	path := strings.TrimSuffix(obj, ".o") + ".dynlist"
	if cachedir.Trusted(path) {
		return path, nil
	}
	names, err := exportedSymbols(obj, "__weave_")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %s;\n", n)
	}
	b.WriteString("};\n")
	if err := replacefile.Write(path, filepath.Base(path)+"-*.tmp", []byte(b.String())); err != nil {
		return "", err
	}
	return path, nil
}

// Exported returns the names of every symbol the runtime object obj
// exports: its __weave_* entry points and the C library functions it
// interposes (malloc, exit, execve, ...), sorted.
func Exported(obj string) ([]string, error) { return exportedSymbols(obj, "") }

// exportedSymbols returns the sorted names starting with prefix of the
// symbols the ELF object obj defines with global or weak binding and
// default or protected visibility: those a link exports.
func exportedSymbols(obj, prefix string) ([]string, error) {
	f, err := elf.Open(obj)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range syms {
		bind, vis := elf.ST_BIND(s.Info), elf.ST_VISIBILITY(s.Other)
		if strings.HasPrefix(s.Name, prefix) && s.Section != elf.SHN_UNDEF &&
			(bind == elf.STB_GLOBAL || bind == elf.STB_WEAK) && (vis == elf.STV_DEFAULT || vis == elf.STV_PROTECTED) {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no runtime symbols", obj)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

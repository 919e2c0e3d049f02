package weave

import (
	"bytes"
	"sync"

	"modernc.org/cc/v4"
)

// parallelDefs is how many bytes of function definitions make visitDefs
// walk them in two halves at once (a variable for the tests).
var parallelDefs = 256 << 10

// visitDefs is the frame analysis' walk of the unit's function
// definitions: what each calls, and how (frameInfo), by name. The walk is
// mostly cache misses (sqlite3.c's 880,000 nodes, 50 ns each: 45 ms of
// the weave), so a large unit's definitions are walked in two halves at
// once, each into its own infos, refs and caches, merged in order after:
// the same result as one walk of them all (TestVisitDefsHalves).
func (w *weaver) visitDefs() map[string]*frameInfo {
	var defs []*cc.FunctionDefinition
	var sizes []int
	total := 0
	for l := w.u.AST.TranslationUnit; l != nil; l = l.TranslationUnit {
		if ed := l.ExternalDeclaration; ed != nil && ed.Case == cc.ExternalDeclarationFuncDef {
			fd := ed.FunctionDefinition
			n := max(0, w.u.Offset(fd.CompoundStatement.Token2)-w.u.Offset(fd))
			defs, sizes, total = append(defs, fd), append(sizes, n), total+n
		}
	}
	half := len(defs)
	if total >= parallelDefs {
		for i, sum := 0, 0; i < len(defs); i++ {
			if sum += sizes[i]; sum >= total/2 {
				half = i + 1
				break
			}
		}
	}
	w.code() // the halves read it (coldCallee): made once, before
	first := w.defScan()
	second := w.defScan()
	var wg sync.WaitGroup
	if half < len(defs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			second.visitAll(defs[half:])
		}()
	}
	first.visitAll(defs[:half])
	wg.Wait()
	w.refs = first.refs
	w.pending = first.pending
	w.cold = first.cold
	for name, fi := range second.infos {
		if old := first.infos[name]; old != nil {
			old.merge(fi)
		} else {
			first.infos[name] = fi
		}
	}
	for name := range second.refs.names {
		w.refs.names[name] = true
	}
	for name := range second.pending {
		if w.pending == nil {
			w.pending = map[string]bool{}
		}
		w.pending[name] = true
	}
	return first.infos
}

// A defScan walks function definitions into infos, with a weaver of its
// own: a copy of w whose fields the walk writes (refs, pending, cold) are
// its own.
type defScan struct {
	*weaver
	infos map[string]*frameInfo
}

func (w *weaver) defScan() *defScan {
	c := *w
	c.pending, c.cold = nil, nil
	s := &defScan{weaver: &c, infos: map[string]*frameInfo{}}
	c.refs = newFuncRefs(&c)
	return s
}

func (s *defScan) visitAll(defs []*cc.FunctionDefinition) {
	for _, fd := range defs {
		s.visitDef(fd.Declarator, fd.CompoundStatement, s.u.Text[s.u.Offset(fd):s.u.Offset(fd.CompoundStatement.Token2)])
	}
}

// visitDef walks one function definition (and the nested ones in it).
func (s *defScan) visitDef(d *cc.Declarator, body *cc.CompoundStatement, text []byte) {
	w := s.weaver
	fi := &frameInfo{}
	if old := s.infos[d.Name()]; old != nil { // the same name defined twice (nested functions): merge
		fi = old
	}
	s.infos[d.Name()] = fi
	fi.external = fi.external || d.Linkage() == cc.External
	// A cleanup attribute calls a function implicitly.
	if bytes.Contains(text, []byte("cleanup")) {
		fi.seed, fi.forced = true, true
	}
	fi.body = body
	w.walkCalls(body, func(n cc.Node, cold, loop bool) bool {
		w.refs.visit(n) // for addressTaken: the bodies in this walk
		switch x := n.(type) {
		case *cc.BlockItem:
			if x.Case == cc.BlockItemFuncDef { // GNU nested function: frame both
				fi.seed, fi.forced = true, true
				walk(x.DeclarationSpecifiers, w.refs.visit)
				walk(x.Declarator, w.refs.visit)
				s.visitDef(x.Declarator, x.CompoundStatement, nil)
				nested := s.infos[x.Declarator.Name()]
				nested.seed, nested.forced = true, true
				return false
			}
		case *cc.LabeledStatement:
			fi.labels = fi.labels || x.Case == cc.LabeledStatementLabel
		case *cc.PostfixExpression:
			if x.Case == cc.PostfixExpressionCall {
				kind := w.callee(fi, x, cold, loop)
				// A call whose text the weaver cannot bracket
				// (cc/v4's offsets inside __builtin_va_arg) is
				// never framed where it is made.
				if kind != calleeNone && kind != calleeAlloc && !w.bracketable(x) {
					fi.forced = true
				}
			}
		}
		return true
	})
}

// merge adds to fi what a later walk of a definition of the same name
// found (visitDef's merge, across the halves): every field visitDef
// sets.
func (fi *frameInfo) merge(later *frameInfo) {
	fi.seed = fi.seed || later.seed
	fi.indirect = fi.indirect || later.indirect
	fi.allocs = fi.allocs || later.allocs
	fi.callees = append(fi.callees, later.callees...)
	fi.externs = append(fi.externs, later.externs...)
	fi.external = fi.external || later.external
	fi.sites = append(fi.sites, later.sites...)
	fi.body = later.body
	fi.forced = fi.forced || later.forced
	fi.labels = fi.labels || later.labels
}

package weave

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"modernc.org/cc/v4"

	"github.com/weave-profiler/weave/parse"
)

// TestWalkCalls checks walkCalls against walk and the three walks it
// replaced (coldCallsOracle, loopCallsOracle): for every function body of
// the cold calls' test program, testdata's programs and sqlite3.c, it
// visits the same nodes in the same order, and says a call is cold, or
// in a loop, where they did. And addressTaken, which the frame analysis'
// walk feeds, finds what its own walk of the unit found
// (addressTakenOracle).
func TestWalkCalls(t *testing.T) {
	cold := tempSource(t, "cold.c", coldSrc)
	eachTestUnit(t, false, []string{cold}, func(src string, u *parse.Unit) {
		w := testWeaver(t, u)
		w.need = w.analyseFrames()
		if got, want := w.addressTaken(), addressTakenOracle(w); !slices.Equal(got, want) {
			t.Errorf("%s: addressTaken %v, want %v", src, got, want)
		} else {
			t.Logf("%s: %d functions whose address is taken", filepath.Base(src), len(got))
		}
		var bodies, calls, colds, loops int
		walk(u.AST.TranslationUnit, func(n cc.Node) bool {
			var body *cc.CompoundStatement
			switch x := n.(type) {
			case *cc.FunctionDefinition:
				body = x.CompoundStatement
			case *cc.BlockItem:
				if x.Case == cc.BlockItemFuncDef {
					body = x.CompoundStatement
				}
			}
			if body == nil {
				return true
			}
			bodies++
			wantCold, wantLoop := coldCallsOracle(w, body), loopCallsOracle(body)
			var want []cc.Node
			walk(body, func(m cc.Node) bool { want = append(want, m); return true })
			i := 0
			w.walkCalls(body, func(m cc.Node, cold, loop bool) bool {
				if i >= len(want) || m != want[i] {
					t.Fatalf("%s: node %d of the body at %v: walkCalls visits %T at %v, walk %T", src, i, body.Position(), m, m.Position(), want[min(i, len(want)-1)])
				}
				i++
				if x, ok := m.(*cc.PostfixExpression); ok && x.Case == cc.PostfixExpressionCall {
					calls++
					if cold != wantCold[x] || loop != wantLoop[x] {
						t.Errorf("%s: the call at %v: cold %v, loop %v; want %v, %v", src, x.Position(), cold, loop, wantCold[x], wantLoop[x])
					}
					if cold {
						colds++
					}
					if loop {
						loops++
					}
				}
				return true
			})
			if i != len(want) {
				t.Fatalf("%s: the body at %v: walkCalls visits %d nodes, walk %d", src, body.Position(), i, len(want))
			}
			return true
		})
		t.Logf("%s: %d bodies, %d calls, %d cold, %d in loops", filepath.Base(src), bodies, calls, colds, loops)
		if src == cold && (colds == 0 || loops == 0) {
			t.Errorf("%s: no cold call or none in a loop", src)
		}
	})
}

// coldCallsOracle returns the calls of body that run on a cold path, as
// weave found them before walkCalls: in a walk of their own.
func coldCallsOracle(w *weaver, body cc.Node) map[*cc.PostfixExpression]bool {
	cold := map[*cc.PostfixExpression]bool{}
	markAll := func(n cc.Node) { addCallsOracle(cold, n) }
	walk(body, func(n cc.Node) bool {
		switch x := n.(type) {
		case *cc.SelectionStatement:
			if x.Case != cc.SelectionStatementIf && x.Case != cc.SelectionStatementIfElse {
				break
			}
			switch expectation(x.ExpressionList) {
			case 0:
				markAll(x.Statement)
			case 1:
				if x.Statement2 != nil {
					markAll(x.Statement2)
				}
			}
		case *cc.LogicalOrExpression:
			if x.Case == cc.LogicalOrExpressionLOr && expectation(x.LogicalOrExpression) == 1 {
				markAll(x.LogicalAndExpression)
			}
		case *cc.LogicalAndExpression:
			if x.Case == cc.LogicalAndExpressionLAnd && expectation(x.LogicalAndExpression) == 0 {
				markAll(x.InclusiveOrExpression)
			}
		case *cc.ConditionalExpression:
			if x.Case != cc.ConditionalExpressionCond {
				break
			}
			switch expectation(x.LogicalOrExpression) {
			case 0:
				markAll(x.ExpressionList)
			case 1:
				markAll(x.ConditionalExpression)
			}
		case *cc.PostfixExpression:
			if x.Case == cc.PostfixExpressionCall && w.coldCallee(x.PostfixExpression) {
				markAll(x)
				return false
			}
		}
		return true
	})
	return cold
}

// loopCallsOracle returns the calls of body in a loop, as weave found
// them before walkCalls.
func loopCallsOracle(body cc.Node) map[*cc.PostfixExpression]bool {
	in := map[*cc.PostfixExpression]bool{}
	walk(body, func(n cc.Node) bool {
		x, ok := n.(*cc.IterationStatement)
		if !ok || x.Case == cc.IterationStatementDo && isZero(x.ExpressionList) {
			return true
		}
		addCallsOracle(in, x)
		return false
	})
	return in
}

func addCallsOracle(set map[*cc.PostfixExpression]bool, n cc.Node) {
	if n == nil {
		return
	}
	walk(n, func(m cc.Node) bool {
		if x, ok := m.(*cc.PostfixExpression); ok && x.Case == cc.PostfixExpressionCall {
			set[x] = true
		}
		return true
	})
}

// addressTakenOracle is addressTaken as it was before walkCalls fed it: a
// walk of its own over the whole unit.
func addressTakenOracle(w *weaver) []string {
	callees := map[*cc.PrimaryExpression]bool{}
	taken := map[string]bool{}
	inline := map[string]bool{}
	for l := w.u.AST.TranslationUnit; l != nil; l = l.TranslationUnit {
		if ed := l.ExternalDeclaration; ed != nil && ed.Case == cc.ExternalDeclarationFuncDef && ed.FunctionDefinition.Declarator.IsInline() {
			inline[ed.FunctionDefinition.Declarator.Name()] = true
		}
	}
	walk(w.u.AST.TranslationUnit, func(n cc.Node) bool {
		switch x := n.(type) {
		case *cc.PostfixExpression:
			if x.Case == cc.PostfixExpressionCall {
				if pe := calleeIdent(x.PostfixExpression); pe != nil {
					callees[pe] = true
				}
			}
		case *cc.PrimaryExpression:
			if x.Case != cc.PrimaryExpressionIdent || callees[x] {
				return true
			}
			name := x.Token.SrcStr()
			if need, ok := w.need[name]; !ok || need != needNone || !w.defined[name] || inline[name] || strings.Contains(name, "$") {
				return true
			}
			if d, ok := x.ResolvedTo().(*cc.Declarator); ok && d != nil && d.Type() != nil && d.Type().Kind() == cc.Function {
				taken[name] = true
			}
		}
		return true
	})
	var names []string
	for n := range taken {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// TestVisitDefsHalves: weaving a unit with its definitions walked in two
// halves at once (visitDefs) gives the text and results of one walk of
// them all, for the cold calls' program, testdata's programs (nested
// functions, ...) and sqlite3.c. Run with -race too.
func TestVisitDefsHalves(t *testing.T) {
	cold := tempSource(t, "cold.c", coldSrc)
	// Nested functions of one name in both halves: visitDef merges them.
	nested := tempSource(t, "nested.c", `#include <stdlib.h>
extern int ext(int);
int outer2(int n);
void *outer1(int n) { void *helper(int k) { outer2(k); return malloc(k); } int h2(int k) { return k; } return helper(h2(n)); }
int outer2(int n) { int helper(int k) { return k + 1; } for (int i = 0; i < n; i++) ext(i); return helper(n); }
int outer3(int (*g)(int), int n) { int helper(int k) { again: if (k-- > 0) goto again; return ext(k) + outer2(k); } void *h2(int k) { return g(k) ? malloc(k) : 0; } return helper(n) + outer2(n) + !h2(n); }
`)
	defer func(n int) { parallelDefs = n }(parallelDefs)
	eachTestUnit(t, false, []string{cold, nested}, func(src string, u *parse.Unit) {
		var res [2]*Result
		var infos [2]map[string]*frameInfo
		var refs, pending [2]map[string]bool
		for i, n := range []int{1 << 62, 0} {
			parallelDefs = n
			var err error
			if res[i], err = Weave(u, Options{Prologue: "/* prologue */\n"}); err != nil {
				t.Fatal(err)
			}
			w := testWeaver(t, u)
			infos[i] = w.visitDefs()
			refs[i], pending[i] = w.refs.names, w.pending
		}
		if !reflect.DeepEqual(infos[0], infos[1]) || !reflect.DeepEqual(refs[0], refs[1]) || !reflect.DeepEqual(pending[0], pending[1]) {
			t.Errorf("%s: the analysis differs, walked in halves", src)
		}
		if !bytes.Equal(res[0].Text, res[1].Text) {
			t.Errorf("%s: the woven text differs, walked in halves", src)
		}
		if !reflect.DeepEqual(res[0].Summary, res[1].Summary) || !reflect.DeepEqual(res[0].Extern, res[1].Extern) ||
			!reflect.DeepEqual(res[0].Functions, res[1].Functions) {
			t.Errorf("%s: the results differ, walked in halves", src)
		}
	})
}

// testWeaver is a weaver of u as Weave makes it, up to the frame
// analysis.
func testWeaver(t *testing.T, u *parse.Unit) *weaver {
	w := &weaver{u: u, res: &Result{}, defined: map[string]bool{}, names: adviceNames(u.Text)}
	for l := u.AST.TranslationUnit; l != nil; l = l.TranslationUnit {
		if ed := l.ExternalDeclaration; ed != nil && ed.Case == cc.ExternalDeclarationFuncDef {
			w.defined[ed.FunctionDefinition.Declarator.Name()] = true
		}
	}
	if err := w.findAllocators(nil); err != nil {
		t.Fatal(err)
	}
	w.allocatorNames()
	return w
}

// tempSource writes text to a file name in a temporary directory and
// returns its path.
func tempSource(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

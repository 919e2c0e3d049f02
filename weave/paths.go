package weave

import "modernc.org/cc/v4"

// Calls per path. A function whose calls that may allocate on its hot
// paths are such that no run of it makes two (sqlite's
// sqlite3VdbeCursorMoveto: `if (p->deferredMoveto) return
// sqlite3VdbeFinishMoveto(p); if (moved) return handleMovedCursor(p);`)
// pushes at most once an activation when framed at those calls, as a
// frame at its entry would, and not at all on the paths that make none.

// noPath is the count of a way out no run takes (a statement that never
// falls through, one with no jump out).
const noPath = -1 << 30

// pathCalls bounds the number of calls of set one run of body makes. It
// follows sequences, if/else and jumps out of the function; a switch,
// loop or expression counts every call of set in it, and a goto makes
// the bound unusable (2).
func pathCalls(body *cc.CompoundStatement, set map[*cc.PostfixExpression]bool) int {
	p := paths{set: set}
	fall, out := p.compound(body)
	return max(fall, out, 0)
}

type paths struct {
	set map[*cc.PostfixExpression]bool
}

// count is the number of calls of set in n.
func (p paths) count(n cc.Node) int {
	c := 0
	walk(n, func(m cc.Node) bool {
		if x, ok := m.(*cc.PostfixExpression); ok && p.set[x] {
			c++
		}
		return true
	})
	return c
}

// all is the bound of a statement counted whole: every call of set in it,
// on its way through and on its jumps out.
func (p paths) all(n cc.Node) (fall, out int) {
	c := p.count(n)
	return c, c
}

// add is a+b, or noPath if either is.
func add(a, b int) int {
	if a == noPath || b == noPath {
		return noPath
	}
	return a + b
}

// compound returns the most calls of set a run of s makes up to its end
// (fall) and up to a jump out of it (out: return, break, continue).
func (p paths) compound(s *cc.CompoundStatement) (fall, out int) {
	fall, out = 0, noPath
	if s == nil {
		return fall, out
	}
	for l := s.BlockItemList; l != nil; l = l.BlockItemList {
		var f, o int
		switch it := l.BlockItem; it.Case {
		case cc.BlockItemStmt:
			f, o = p.stmt(it.Statement)
		case cc.BlockItemDecl:
			f, o = p.all(it.Declaration)
		case cc.BlockItemLabel:
			f, o = 0, noPath
		default: // a nested function: framed at entry anyway
			return 2, 2
		}
		out = max(out, add(fall, o))
		fall = add(fall, f)
	}
	return fall, out
}

// stmt is compound's bound for one statement.
func (p paths) stmt(s *cc.Statement) (fall, out int) {
	if s == nil {
		return 0, noPath
	}
	switch s.Case {
	case cc.StatementCompound:
		return p.compound(s.CompoundStatement)
	case cc.StatementLabeled:
		if s.LabeledStatement.Case == cc.LabeledStatementLabel {
			return 2, 2 // a goto's target: any count
		}
		return p.stmt(s.LabeledStatement.Statement)
	case cc.StatementSelection:
		x := s.SelectionStatement
		if x.Case == cc.SelectionStatementSwitch {
			return p.all(x)
		}
		c := p.count(x.ExpressionList)
		f1, o1 := p.stmt(x.Statement)
		f2, o2 := 0, noPath // no else: the condition's way through
		if x.Case == cc.SelectionStatementIfElse {
			f2, o2 = p.stmt(x.Statement2)
		}
		return add(c, max(f1, f2)), add(c, max(o1, o2))
	case cc.StatementJump:
		x := s.JumpStatement
		switch x.Case {
		case cc.JumpStatementReturn:
			return noPath, p.count(x.ExpressionList)
		case cc.JumpStatementBreak, cc.JumpStatementContinue:
			return noPath, 0
		}
		return 2, 2 // goto
	case cc.StatementAsm:
		return 0, noPath
	}
	// An expression (a statement expression in it may jump out) or a
	// loop: all its calls.
	return p.all(s)
}

// Calls every run makes. A function framed at its calls that may make
// several a run keeps its frame from the first (weave.h,
// __weave_pushed) only if every run makes one: else its runs that make
// none would pay for the guard at its entry and its exits.

// never is the count of a way out no run takes, for leastCalls.
const never = 1 << 30

// atLeast is what leastCalls learns of a statement: the fewest calls of
// the set on any run up to its end (fall), a return (ret), a break (brk)
// or a continue (cont); never if none gets there.
type atLeast struct{ fall, ret, brk, cont int }

// sum is a+b, or never if either is.
func sum(a, b int) int {
	if a >= never || b >= never {
		return never
	}
	return a + b
}

// leastCalls is a lower bound of the calls of set that any run of body
// makes: it follows sequences, if/else, jumps and the loops that run
// their body at least once (do ... while, for (;;)); a switch counts
// the calls of its condition, other loops none, and an expression the
// calls it makes whatever its operands' values (not those under ?:, &&,
// || or in a statement expression).
func leastCalls(body *cc.CompoundStatement, set map[*cc.PostfixExpression]bool) int {
	r := paths{set: set}.leastCompound(body)
	return min(r.fall, r.ret)
}

// definite is the number of calls of set that evaluating e makes
// whatever the values of its operands.
func (p paths) definite(e cc.Node) int {
	c := 0
	walk(e, func(m cc.Node) bool {
		switch x := m.(type) {
		case *cc.ConditionalExpression:
			if x.Case == cc.ConditionalExpressionCond {
				c += p.definite(x.LogicalOrExpression)
				return false
			}
		case *cc.LogicalAndExpression:
			if x.Case == cc.LogicalAndExpressionLAnd {
				c += p.definite(x.LogicalAndExpression)
				return false
			}
		case *cc.LogicalOrExpression:
			if x.Case == cc.LogicalOrExpressionLOr {
				c += p.definite(x.LogicalOrExpression)
				return false
			}
		case *cc.PrimaryExpression:
			if x.Case == cc.PrimaryExpressionStmt {
				return false
			}
		case *cc.PostfixExpression:
			if p.set[x] {
				c++
			}
		}
		return true
	})
	return c
}

// plain is the bound of an expression or declaration: it falls through
// after its definite calls, and a statement expression in it may jump
// out after none.
func (p paths) plain(n cc.Node) atLeast {
	r := atLeast{p.definite(n), never, never, never}
	walk(n, func(m cc.Node) bool {
		if _, ok := m.(*cc.JumpStatement); ok {
			r.ret, r.brk, r.cont = 0, 0, 0
		}
		return true
	})
	return r
}

func (p paths) leastCompound(s *cc.CompoundStatement) atLeast {
	acc := atLeast{0, never, never, never}
	if s == nil {
		return acc
	}
	for l := s.BlockItemList; l != nil; l = l.BlockItemList {
		var r atLeast
		switch it := l.BlockItem; it.Case {
		case cc.BlockItemStmt:
			r = p.leastStmt(it.Statement)
		case cc.BlockItemDecl:
			r = p.plain(it.Declaration)
		default:
			r = atLeast{0, 0, 0, 0}
		}
		acc.ret = min(acc.ret, sum(acc.fall, r.ret))
		acc.brk = min(acc.brk, sum(acc.fall, r.brk))
		acc.cont = min(acc.cont, sum(acc.fall, r.cont))
		acc.fall = sum(acc.fall, r.fall)
	}
	return acc
}

func (p paths) leastStmt(s *cc.Statement) atLeast {
	if s == nil {
		return atLeast{0, never, never, never}
	}
	switch s.Case {
	case cc.StatementCompound:
		return p.leastCompound(s.CompoundStatement)
	case cc.StatementExpr:
		return p.plain(s.ExpressionStatement)
	case cc.StatementLabeled:
		if s.LabeledStatement.Case == cc.LabeledStatementLabel {
			return atLeast{0, 0, 0, 0} // a goto's target
		}
		return p.leastStmt(s.LabeledStatement.Statement)
	case cc.StatementSelection:
		x := s.SelectionStatement
		c := p.definite(x.ExpressionList)
		if x.Case == cc.SelectionStatementSwitch {
			return atLeast{c, c, c, c}
		}
		a, b := p.leastStmt(x.Statement), atLeast{0, never, never, never}
		if x.Case == cc.SelectionStatementIfElse {
			b = p.leastStmt(x.Statement2)
		}
		return atLeast{sum(c, min(a.fall, b.fall)), sum(c, min(a.ret, b.ret)), sum(c, min(a.brk, b.brk)), sum(c, min(a.cont, b.cont))}
	case cc.StatementIteration:
		x := s.IterationStatement
		cond := x.ExpressionList
		switch x.Case {
		case cc.IterationStatementDo: // the body once, then the condition may end it
			b := p.leastStmt(x.Statement)
			return atLeast{min(b.fall, b.brk, b.cont), b.ret, never, never}
		case cc.IterationStatementFor:
			cond = x.ExpressionList2
		}
		if v, ok := intConst(cond); cond == nil || ok && v != 0 { // for (;;): left by a break or return
			b := p.leastStmt(x.Statement)
			return atLeast{b.brk, b.ret, never, never}
		}
		return atLeast{0, 0, never, never}
	case cc.StatementJump:
		x := s.JumpStatement
		switch x.Case {
		case cc.JumpStatementReturn:
			return atLeast{never, p.definite(x.ExpressionList), never, never}
		case cc.JumpStatementBreak:
			return atLeast{never, never, 0, never}
		case cc.JumpStatementContinue:
			return atLeast{never, never, never, 0}
		}
		return atLeast{0, 0, 0, 0} // goto
	}
	return atLeast{0, never, never, never} // asm
}

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

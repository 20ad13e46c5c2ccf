/*
 * tok2column.c --
 *
 *	The C half of tclcprof's "tok2column" demo, modelled on the example
 *	of Griffin & Pahlmeyer, "Integrated Tcl/C Performance Profiling"
 *	(Figure 6 and Figure 10): a C command that
 *
 *	  1. finds out which HDL the caller means by asking Tcl procs
 *	     (::MtiFS::IsVhdlLanguage, then ::MtiFS::IsVerilogLanguage) from
 *	     C, as the simulator's lang2lang_type() did, and
 *	  2. tokenizes a block of HDL text in C, tracking line and column
 *	     positions and hashing every token.
 *
 *	Step 1 is the expensive, wasteful part (every call goes back into
 *	Tcl twice); step 2 is the work the command nominally exists for.
 *	A profile of examples/tok2column.tcl is meant to show exactly that,
 *	with Tcl procs and C functions interleaved:
 *
 *	  doWork > doWork2 > tok2column > tclprim_tok2column
 *	      > lang2lang_type > ::MtiFS::IsVhdlLanguage, ::MtiFS::IsVerilogLanguage
 *	      > tokenize_line > scan_token > is_keyword
 *
 *	Every C function meant to show up in a profile is a real frame:
 *	noinline and noclone (no .isra/.constprop copies with other names),
 *	and each one uses what its callees return, so that no call becomes a
 *	tail call that would drop the caller's frame from the native stack.
 *
 *	Tcl usage:
 *
 *	    tok2column language column text
 *
 *	language is resolved by the Tcl procs above (an error if neither
 *	accepts it, or if one of them fails); column is a 0-based display
 *	column (tabs to multiples of 8, one column per UTF-8 character);
 *	text may hold several lines. The result is a dict:
 *
 *	    language  "verilog" or "vhdl"
 *	    token     text of the first token covering column on any line
 *		      ("" if no token does)
 *	    line      1-based line of that token (0 if none)
 *	    start     its first column, end: one past its last (-1 if none)
 *	    kind      keyword, identifier, number, string, comment,
 *		      directive, operator (or "" if none)
 *	    count     number of tokens in the whole text
 *	    keywords  how many of them were keywords of the language
 *	    digest    hash over all tokens and their positions
 *
 * Copyright (c) 2026 The tclcprof authors.
 * See the file "LICENSE" for terms of use.
 */

#include <tcl.h>
#include <stddef.h>
#include <string.h>

/*
 * Tcl 8.6 and Tcl 9 from one source: byte counts are Tcl_Size in Tcl 9
 * (int in 8.6, whose tcl.h may lack the name), and Tcl_FreeProc takes a
 * void * there (a char * in 8.6).
 */

#if TCL_MAJOR_VERSION < 9 && !defined(TCL_SIZE_MAX)
typedef int Tcl_Size;
#endif
#if TCL_MAJOR_VERSION < 9
typedef char FreeBlock;
#else
typedef void FreeBlock;
#endif

#define NOFRAME_MERGE __attribute__((noinline, noclone))

/*
 * Languages, as lang2lang_type() returns them.
 */

enum {
    LANG_ERROR = -1,		/* Tcl error; the message is in the interp. */
    LANG_UNKNOWN = 0,
    LANG_VHDL = 1,
    LANG_VERILOG = 2
};

static const char *const langNames[] = { "unknown", "vhdl", "verilog" };

/*
 * Token kinds.
 */

enum {
    TOK_NONE, TOK_KEYWORD, TOK_IDENTIFIER, TOK_NUMBER, TOK_STRING,
    TOK_COMMENT, TOK_DIRECTIVE, TOK_OPERATOR
};

static const char *const kindNames[] = {
    "", "keyword", "identifier", "number", "string", "comment",
    "directive", "operator"
};

/*
 * Keyword tables: open addressing over FNV-1a hashes, built once per
 * command (per interpreter). VHDL is case-insensitive: its keywords are
 * stored and looked up in lower case.
 */

#define KW_SLOTS 512		/* Power of 2, well above the key count. */
#define KW_MAXLEN 32

typedef struct KeywordTable {
    unsigned int hash[KW_SLOTS];
    const char *word[KW_SLOTS];	/* NULL: empty slot. */
    unsigned char len[KW_SLOTS];
} KeywordTable;

typedef struct LangRules {
    int lang;
    int foldCase;		/* Identifiers are case-insensitive. */
    KeywordTable keywords;
} LangRules;

static const char *const verilogKeywords[] = {
    "always", "and", "assign", "automatic", "begin", "buf", "bufif0",
    "bufif1", "case", "casex", "casez", "cell", "cmos", "config",
    "deassign", "default", "defparam", "design", "disable", "edge", "else",
    "end", "endcase", "endconfig", "endfunction", "endgenerate",
    "endmodule", "endprimitive", "endspecify", "endtable", "endtask",
    "event", "for", "force", "forever", "fork", "function", "generate",
    "genvar", "highz0", "highz1", "if", "ifnone", "incdir", "include",
    "initial", "inout", "input", "instance", "integer", "join", "large",
    "liblist", "library", "localparam", "macromodule", "medium", "module",
    "nand", "negedge", "nmos", "nor", "noshowcancelled", "not", "notif0",
    "notif1", "or", "output", "parameter", "pmos", "posedge", "primitive",
    "pull0", "pull1", "pulldown", "pullup", "pulsestyle_ondetect",
    "pulsestyle_onevent", "rcmos", "real", "realtime", "reg", "release",
    "repeat", "rnmos", "rpmos", "rtran", "rtranif0", "rtranif1", "scalared",
    "showcancelled", "signed", "small", "specify", "specparam", "strong0",
    "strong1", "supply0", "supply1", "table", "task", "time", "tran",
    "tranif0", "tranif1", "tri", "tri0", "tri1", "triand", "trior",
    "trireg", "unsigned", "use", "uwire", "vectored", "wait", "wand",
    "weak0", "weak1", "while", "wire", "wor", "xnor", "xor", NULL
};

static const char *const vhdlKeywords[] = {
    "abs", "access", "after", "alias", "all", "and", "architecture",
    "array", "assert", "assume", "attribute", "begin", "block", "body",
    "buffer", "bus", "case", "component", "configuration", "constant",
    "context", "cover", "default", "disconnect", "downto", "else", "elsif",
    "end", "entity", "exit", "fairness", "file", "for", "force",
    "function", "generate", "generic", "group", "guarded", "if", "impure",
    "in", "inertial", "inout", "is", "label", "library", "linkage",
    "literal", "loop", "map", "mod", "nand", "new", "next", "nor", "not",
    "null", "of", "on", "open", "or", "others", "out", "package",
    "parameter", "port", "postponed", "procedure", "process", "property",
    "protected", "pure", "range", "record", "register", "reject",
    "release", "rem", "report", "restrict", "return", "rol", "ror",
    "select", "sequence", "severity", "shared", "signal", "sla", "sll",
    "sra", "srl", "strong", "subtype", "then", "to", "transport", "type",
    "unaffected", "units", "until", "use", "variable", "vmode", "vprop",
    "vunit", "wait", "when", "while", "with", "xnor", "xor", NULL
};

/*
 * Per-interpreter state of the command (its client data).
 */

typedef struct Tok2colState {
    Tcl_Obj *isVhdlCmd;		/* "::MtiFS::IsVhdlLanguage", kept with a
				 * reference so that its cmdName internal
				 * rep caches the command lookup. */
    Tcl_Obj *isVerilogCmd;	/* "::MtiFS::IsVerilogLanguage". */
    LangRules verilog;
    LangRules vhdl;
} Tok2colState;

/*
 * The scanner (a hand-written yylex) and its tokens.
 */

typedef struct Token {
    const char *text;		/* First byte, inside the scanned buffer. */
    int len;			/* Bytes. */
    int kind;			/* TOK_*. */
    int line;			/* 1-based. */
    int startCol, endCol;	/* Display columns, end exclusive. */
    unsigned int hash;		/* FNV-1a of the (case-folded) text. */
} Token;

typedef struct Scanner {
    const LangRules *rules;
    const char *p, *end;
    int line, col;
    int inBlockComment;		/* Inside a slash-star comment that spans
				 * lines: its next piece comes first. */
} Scanner;

typedef struct TokStats {
    int count;
    int keywords;
    unsigned int digest;
    int found;			/* Token at the column found: in match. */
    Token match;
} TokStats;

#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

static inline unsigned char
FoldChar(
    const LangRules *rules,
    unsigned char c)
{
    if (rules->foldCase && c >= 'A' && c <= 'Z') {
	return (unsigned char) (c + ('a' - 'A'));
    }
    return c;
}

static unsigned int
HashBytes(
    const LangRules *rules,
    const char *s,
    int len)
{
    unsigned int h = FNV_OFFSET;
    int i;

    for (i = 0; i < len; i++) {
	h ^= FoldChar(rules, (unsigned char) s[i]);
	h *= FNV_PRIME;
    }
    return h;
}

static void
InitRules(
    LangRules *rules,
    int lang,
    int foldCase,
    const char *const *words)
{
    KeywordTable *kw = &rules->keywords;
    int i;

    memset(rules, 0, sizeof(*rules));
    rules->lang = lang;
    rules->foldCase = foldCase;
    for (i = 0; words[i] != NULL; i++) {
	int len = (int) strlen(words[i]);
	unsigned int h = HashBytes(rules, words[i], len);
	unsigned int slot = h & (KW_SLOTS - 1);

	while (kw->word[slot] != NULL) {
	    slot = (slot + 1) & (KW_SLOTS - 1);
	}
	kw->hash[slot] = h;
	kw->word[slot] = words[i];
	kw->len[slot] = (unsigned char) len;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * is_keyword --
 *
 *	Whether the identifier s[0..len) with FNV hash h is a keyword of
 *	the language (case-insensitively for VHDL).
 *
 *----------------------------------------------------------------------
 */

static NOFRAME_MERGE int
is_keyword(
    const LangRules *rules,
    const char *s,
    int len,
    unsigned int h)
{
    const KeywordTable *kw = &rules->keywords;
    unsigned int slot = h & (KW_SLOTS - 1);

    if (len > KW_MAXLEN) {
	return 0;
    }
    while (kw->word[slot] != NULL) {
	if (kw->hash[slot] == h && kw->len[slot] == len) {
	    const char *w = kw->word[slot];
	    int i;

	    for (i = 0; i < len; i++) {
		if (FoldChar(rules, (unsigned char) s[i])
			!= (unsigned char) w[i]) {
		    break;
		}
	    }
	    if (i == len) {
		return 1;
	    }
	}
	slot = (slot + 1) & (KW_SLOTS - 1);
    }
    return 0;
}

/*
 * Character classes.
 */

static inline int
IsAlpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int
IsDigit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static inline int
IsHexDigit(unsigned char c)
{
    return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline int
IsSpace(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * Advance the scanner over one byte, keeping the display column: a tab
 * goes to the next multiple of 8, UTF-8 continuation bytes take no
 * column, a newline starts the next line.
 */

static inline void
Advance(
    Scanner *s)
{
    unsigned char c = (unsigned char) *s->p++;

    if (c == '\n') {
	s->line++;
	s->col = 0;
    } else if (c == '\t') {
	s->col = (s->col + 8) & ~7;
    } else if ((c & 0xC0) != 0x80) {
	s->col++;
    }
}

static inline int
Peek(
    const Scanner *s,
    int ahead)
{
    return (s->end - s->p > ahead) ? (unsigned char) s->p[ahead] : -1;
}

/*
 * Multi-character operators, longest first within each language.
 */

static const char *const verilogOps[] = {
    "<<<=", ">>>=", "===", "!==", "<<<", ">>>", "<=", ">=", "==", "!=",
    "&&", "||", "<<", ">>", "**", "->", "~&", "~|", "~^", "^~", "+:", "-:",
    "(*", "*)", NULL
};

static const char *const vhdlOps[] = {
    "?/=", "?<=", "?>=", "**", ":=", "<=", ">=", "=>", "/=", "<>", "??",
    "?=", "?<", "?>", "<<", ">>", NULL
};

static int
MatchOperator(
    const Scanner *s)
{
    const char *const *ops =
	    (s->rules->lang == LANG_VHDL) ? vhdlOps : verilogOps;
    ptrdiff_t avail = s->end - s->p;
    int i;

    for (i = 0; ops[i] != NULL; i++) {
	const char *op = ops[i];
	int n;

	if (op[0] != s->p[0]) {
	    continue;
	}
	for (n = 1; op[n] != '\0' && n < avail && op[n] == s->p[n]; n++) {
	    /* Compare the rest. */
	}
	if (op[n] == '\0') {
	    return n;
	}
    }
    return 1;
}

/*
 * Scanning of the pieces of tokens, for both languages.
 */

static void
ScanBlockCommentBody(
    Scanner *s)
{
    while (s->p < s->end) {
	if (s->p[0] == '*' && Peek(s, 1) == '/') {
	    Advance(s);
	    Advance(s);
	    s->inBlockComment = 0;
	    return;
	}
	if (s->p[0] == '\n') {
	    /* The comment continues: its next line is a token of its own. */
	    s->inBlockComment = 1;
	    return;
	}
	Advance(s);
    }
    s->inBlockComment = 0;
}

static void
ScanToEndOfLine(
    Scanner *s)
{
    while (s->p < s->end && *s->p != '\n') {
	Advance(s);
    }
}

static void
ScanString(
    Scanner *s)
{
    Advance(s);				/* Opening quote. */
    while (s->p < s->end && *s->p != '\n') {
	if (*s->p == '"') {
	    if (s->rules->lang == LANG_VHDL && Peek(s, 1) == '"') {
		Advance(s);		/* VHDL: "" inside a string. */
		Advance(s);
		continue;
	    }
	    Advance(s);
	    return;
	}
	if (*s->p == '\\' && s->rules->lang == LANG_VERILOG
		&& s->end - s->p > 1 && s->p[1] != '\n') {
	    Advance(s);
	}
	Advance(s);
    }
}

static void
ScanWord(
    Scanner *s)
{
    while (s->p < s->end) {
	unsigned char c = (unsigned char) *s->p;

	if (IsAlpha(c) || IsDigit(c) || c == '_'
		|| (c == '$' && s->rules->lang == LANG_VERILOG)) {
	    Advance(s);
	} else {
	    break;
	}
    }
}

/*
 * Numbers: Verilog 12, 1_000, 3.5e-2, 8'hFF, 'b1x0z, 4'sd3; VHDL 12,
 * 1_000, 3.5E-2, 16#FF_FF#, 2#1010#E2.
 */

static void
ScanNumber(
    Scanner *s)
{
    while (s->p < s->end) {
	unsigned char c = (unsigned char) *s->p;

	if (IsDigit(c) || c == '_') {
	    Advance(s);
	} else if (c == '.' && Peek(s, 1) >= 0 && IsDigit((unsigned char) Peek(s, 1))) {
	    Advance(s);
	} else if ((c == 'e' || c == 'E') && Peek(s, 1) >= 0
		&& (IsDigit((unsigned char) Peek(s, 1))
		    || ((Peek(s, 1) == '-' || Peek(s, 1) == '+')
			&& Peek(s, 2) >= 0
			&& IsDigit((unsigned char) Peek(s, 2))))) {
	    Advance(s);
	    Advance(s);
	} else if (c == '#' && s->rules->lang == LANG_VHDL) {
	    Advance(s);			/* Based literal: 16#FF#. */
	    while (s->p < s->end && (IsHexDigit((unsigned char) *s->p)
		    || *s->p == '_' || *s->p == '.')) {
		Advance(s);
	    }
	    if (s->p < s->end && *s->p == '#') {
		Advance(s);
	    }
	} else if (c == '\'' && s->rules->lang == LANG_VERILOG) {
	    Advance(s);			/* Based literal: 8'hFF, 4'sb1010. */
	    if (s->p < s->end && (*s->p == 's' || *s->p == 'S')) {
		Advance(s);
	    }
	    if (s->p < s->end && IsAlpha((unsigned char) *s->p)) {
		Advance(s);
	    }
	    while (s->p < s->end && (IsHexDigit((unsigned char) *s->p)
		    || *s->p == '_' || *s->p == 'x' || *s->p == 'X'
		    || *s->p == 'z' || *s->p == 'Z' || *s->p == '?')) {
		Advance(s);
	    }
	} else {
	    break;
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * scan_token --
 *
 *	The lexer: skips white space and fills *tokPtr with the next token
 *	of the text. Returns 1 for a token, 0 at the end of the text.
 *
 *----------------------------------------------------------------------
 */

static NOFRAME_MERGE int
scan_token(
    Scanner *s,
    Token *tokPtr)
{
    const LangRules *rules = s->rules;
    unsigned char c;
    int kind;

    if (s->inBlockComment) {
	/* Skip the newline that ended the comment's previous line. */
	while (s->p < s->end && (*s->p == '\n' || IsSpace((unsigned char) *s->p))) {
	    Advance(s);
	}
	if (s->p >= s->end) {
	    return 0;
	}
	tokPtr->text = s->p;
	tokPtr->line = s->line;
	tokPtr->startCol = s->col;
	ScanBlockCommentBody(s);
	kind = TOK_COMMENT;
	goto done;
    }

    while (s->p < s->end
	    && (*s->p == '\n' || IsSpace((unsigned char) *s->p))) {
	Advance(s);
    }
    if (s->p >= s->end) {
	return 0;
    }

    tokPtr->text = s->p;
    tokPtr->line = s->line;
    tokPtr->startCol = s->col;
    c = (unsigned char) *s->p;

    if (IsAlpha(c) || c == '_') {
	ScanWord(s);
	kind = TOK_IDENTIFIER;
	if (rules->lang == LANG_VHDL && (c == 'x' || c == 'X' || c == 'b'
		|| c == 'B' || c == 'o' || c == 'O') && s->p - tokPtr->text == 1
		&& s->p < s->end && *s->p == '"') {
	    ScanString(s);		/* Bit string literal: X"FF". */
	    kind = TOK_STRING;
	}
    } else if (IsDigit(c)) {
	ScanNumber(s);
	kind = TOK_NUMBER;
    } else if (c == '"') {
	ScanString(s);
	kind = TOK_STRING;
    } else if (rules->lang == LANG_VERILOG && c == '/' && Peek(s, 1) == '/') {
	ScanToEndOfLine(s);
	kind = TOK_COMMENT;
    } else if (c == '/' && Peek(s, 1) == '*') {
	Advance(s);			/* Verilog, and VHDL-2008. */
	Advance(s);
	ScanBlockCommentBody(s);
	kind = TOK_COMMENT;
    } else if (rules->lang == LANG_VHDL && c == '-' && Peek(s, 1) == '-') {
	ScanToEndOfLine(s);
	kind = TOK_COMMENT;
    } else if (rules->lang == LANG_VERILOG && (c == '`' || c == '$')
	    && Peek(s, 1) >= 0 && (IsAlpha((unsigned char) Peek(s, 1))
		|| Peek(s, 1) == '_')) {
	Advance(s);			/* `define, $display. */
	ScanWord(s);
	kind = TOK_DIRECTIVE;
    } else if (rules->lang == LANG_VERILOG && c == '\'' && Peek(s, 1) >= 0
	    && strchr("bBoOdDhHsS", Peek(s, 1)) != NULL && Peek(s, 1) != 0) {
	ScanNumber(s);			/* Unsized based literal: 'b1010. */
	kind = TOK_NUMBER;
    } else if (rules->lang == LANG_VHDL && c == '\'' && Peek(s, 2) == '\''
	    && Peek(s, 1) != '\n') {
	Advance(s);			/* Character literal: '1'. */
	Advance(s);
	Advance(s);
	kind = TOK_STRING;
    } else if (c == '\\') {
	/* Extended/escaped identifier: up to white space (Verilog) or the
	 * closing backslash (VHDL). */
	Advance(s);
	while (s->p < s->end && *s->p != '\n'
		&& !IsSpace((unsigned char) *s->p)) {
	    int closing = (*s->p == '\\');

	    Advance(s);
	    if (closing && rules->lang == LANG_VHDL) {
		break;
	    }
	}
	kind = TOK_IDENTIFIER;
    } else {
	int n = MatchOperator(s);

	while (n-- > 0) {
	    Advance(s);
	}
	kind = TOK_OPERATOR;
    }

  done:
    tokPtr->len = (int) (s->p - tokPtr->text);
    tokPtr->endCol = s->col;
    if (tokPtr->line != s->line) {
	/* Only a string left open at a newline could get here; it ends at
	 * the end of its line. */
	tokPtr->endCol = tokPtr->startCol + tokPtr->len;
    }
    tokPtr->hash = HashBytes(rules, tokPtr->text, tokPtr->len);
    if (kind == TOK_IDENTIFIER
	    && is_keyword(rules, tokPtr->text, tokPtr->len, tokPtr->hash)) {
	kind = TOK_KEYWORD;
    }
    tokPtr->kind = kind;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * tokenize_line --
 *
 *	Tokenizes text[0..len) with the rules of a language. Counts the
 *	tokens and keywords, folds every token's hash and position into a
 *	digest, and records the first token that covers display column
 *	`column` (on whichever line that happens first).
 *
 *----------------------------------------------------------------------
 */

static NOFRAME_MERGE void
tokenize_line(
    const LangRules *rules,
    const char *text,
    int len,
    int column,
    TokStats *statsPtr)
{
    Scanner s;
    Token tok;

    s.rules = rules;
    s.p = text;
    s.end = text + len;
    s.line = 1;
    s.col = 0;
    s.inBlockComment = 0;

    memset(statsPtr, 0, sizeof(*statsPtr));
    statsPtr->digest = FNV_OFFSET;

    while (scan_token(&s, &tok)) {
	statsPtr->count++;
	if (tok.kind == TOK_KEYWORD) {
	    statsPtr->keywords++;
	}
	statsPtr->digest = (statsPtr->digest ^ tok.hash) * FNV_PRIME;
	statsPtr->digest = (statsPtr->digest
		^ (unsigned int) ((tok.line << 12) ^ tok.startCol)) * FNV_PRIME;
	if (!statsPtr->found && tok.startCol <= column && column < tok.endCol) {
	    statsPtr->found = 1;
	    statsPtr->match = tok;
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * AskTcl --
 *
 *	Evaluates "cmdObj langObj" (a language predicate proc) and reads its
 *	result as a boolean. Returns 0 or 1, or -1 with an error in the
 *	interpreter. The interpreter's result is reset on success.
 *
 *	Always inlined: in a profile the Tcl procs sit right under
 *	lang2lang_type, as in the paper's Figure 9.
 *
 *----------------------------------------------------------------------
 */

static inline __attribute__((always_inline)) int
AskTcl(
    Tcl_Interp *interp,
    Tcl_Obj *cmdObj,
    Tcl_Obj *langObj)
{
    Tcl_Obj *objv[2];
    int code, answer;

    /*
     * The caller holds references to both words for as long as the
     * command runs. A local array (not one in the command's client data)
     * keeps nested calls of tok2column from the callback independent.
     */

    objv[0] = cmdObj;
    objv[1] = langObj;
    code = Tcl_EvalObjv(interp, 2, objv, 0);
    if (code == TCL_ERROR) {
	return -1;
    }
    if (code != TCL_OK) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"%s returned an unexpected code %d",
		Tcl_GetString(cmdObj), code));
	return -1;
    }
    if (Tcl_GetBooleanFromObj(interp, Tcl_GetObjResult(interp),
	    &answer) != TCL_OK) {
	Tcl_AppendObjToErrorInfo(interp, Tcl_ObjPrintf(
		"\n    (reading the result of %s)", Tcl_GetString(cmdObj)));
	return -1;
    }
    Tcl_ResetResult(interp);
    return answer != 0;
}

/*
 *----------------------------------------------------------------------
 *
 * lang2lang_type --
 *
 *	Maps a language name to LANG_VHDL or LANG_VERILOG by asking the
 *	Tcl procs ::MtiFS::IsVhdlLanguage and ::MtiFS::IsVerilogLanguage,
 *	in that order, as the simulator did. Returns LANG_UNKNOWN if
 *	neither accepts the name, LANG_ERROR (message in the interpreter)
 *	if one of them fails.
 *
 *----------------------------------------------------------------------
 */

static NOFRAME_MERGE int
lang2lang_type(
    Tcl_Interp *interp,
    Tok2colState *statePtr,
    Tcl_Obj *langObj)
{
    int answer;

    answer = AskTcl(interp, statePtr->isVhdlCmd, langObj);
    if (answer < 0) {
	return LANG_ERROR;
    }
    if (answer) {
	return LANG_VHDL;
    }
    answer = AskTcl(interp, statePtr->isVerilogCmd, langObj);
    if (answer < 0) {
	return LANG_ERROR;
    }
    if (answer) {
	return LANG_VERILOG;
    }
    return LANG_UNKNOWN;
}

/*
 *----------------------------------------------------------------------
 *
 * tclprim_tok2column --
 *
 *	The "tok2column language column text" command.
 *
 *----------------------------------------------------------------------
 */

static NOFRAME_MERGE int
tclprim_tok2column(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tok2colState *statePtr = (Tok2colState *) clientData;
    Tcl_Obj *langObj, *textObj, *resultObj;
    const LangRules *rules;
    const char *text;
    TokStats stats;
    int column, lang, code = TCL_ERROR;
    Tcl_Size len;

    if (objc != 4) {
	Tcl_WrongNumArgs(interp, 1, objv, "language column text");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[2], &column) != TCL_OK) {
	return TCL_ERROR;
    }

    /*
     * The callbacks may do anything, including redefining this command
     * or shimmering the arguments: hold on to the state and the words.
     */

    Tcl_Preserve(statePtr);
    langObj = objv[1];
    textObj = objv[3];
    Tcl_IncrRefCount(langObj);
    Tcl_IncrRefCount(textObj);

    lang = lang2lang_type(interp, statePtr, langObj);
    if (lang == LANG_ERROR) {
	Tcl_AppendObjToErrorInfo(interp, Tcl_ObjPrintf(
		"\n    (finding the language type of \"%s\")",
		Tcl_GetString(langObj)));
	goto done;
    }
    if (lang == LANG_UNKNOWN) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"unknown HDL language \"%s\": must be a VHDL or Verilog name",
		Tcl_GetString(langObj)));
	Tcl_SetErrorCode(interp, "TOK2COLUMN", "LANGUAGE",
		Tcl_GetString(langObj), NULL);
	goto done;
    }
    rules = (lang == LANG_VHDL) ? &statePtr->vhdl : &statePtr->verilog;

    text = Tcl_GetStringFromObj(textObj, &len);
    tokenize_line(rules, text, (int) len, column, &stats);

    resultObj = Tcl_NewListObj(0, NULL);
#define PUT(key, valueObj) \
    Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewStringObj(key, -1)); \
    Tcl_ListObjAppendElement(NULL, resultObj, (valueObj))
    PUT("language", Tcl_NewStringObj(langNames[lang], -1));
    if (stats.found) {
	PUT("token", Tcl_NewStringObj(stats.match.text, stats.match.len));
	PUT("line", Tcl_NewIntObj(stats.match.line));
	PUT("start", Tcl_NewIntObj(stats.match.startCol));
	PUT("end", Tcl_NewIntObj(stats.match.endCol));
	PUT("kind", Tcl_NewStringObj(kindNames[stats.match.kind], -1));
    } else {
	PUT("token", Tcl_NewObj());
	PUT("line", Tcl_NewIntObj(0));
	PUT("start", Tcl_NewIntObj(-1));
	PUT("end", Tcl_NewIntObj(-1));
	PUT("kind", Tcl_NewObj());
    }
    PUT("count", Tcl_NewIntObj(stats.count));
    PUT("keywords", Tcl_NewIntObj(stats.keywords));
    PUT("digest", Tcl_NewWideIntObj((Tcl_WideInt) stats.digest));
#undef PUT
    Tcl_SetObjResult(interp, resultObj);
    code = TCL_OK;

  done:
    Tcl_DecrRefCount(textObj);
    Tcl_DecrRefCount(langObj);
    Tcl_Release(statePtr);
    return code;
}

/*
 * Freeing the state: the command's delete proc hands it to Tcl_EventuallyFree
 * so that a call in progress (see Tcl_Preserve above) finishes first.
 */

static void
FreeState(
    FreeBlock *blockPtr)
{
    Tok2colState *statePtr = (Tok2colState *) blockPtr;

    Tcl_DecrRefCount(statePtr->isVhdlCmd);
    Tcl_DecrRefCount(statePtr->isVerilogCmd);
    ckfree(statePtr);
}

static void
DeleteTok2column(
    ClientData clientData)
{
    Tcl_EventuallyFree(clientData, FreeState);
}

/*
 *----------------------------------------------------------------------
 *
 * Tok2column_Init --
 *
 *	Package initialization: "load lib Tok2column" creates the
 *	tok2column command (global namespace) and provides package
 *	tok2column 1.0. The Tcl procs it calls back are the script's
 *	business (examples/tok2column.tcl).
 *
 *----------------------------------------------------------------------
 */

DLLEXPORT int
Tok2column_Init(
    Tcl_Interp *interp)
{
    Tok2colState *statePtr;

    if (Tcl_InitStubs(interp, "8.6-", 0) == NULL) {
	return TCL_ERROR;
    }

    statePtr = (Tok2colState *) ckalloc(sizeof(Tok2colState));
    statePtr->isVhdlCmd = Tcl_NewStringObj("::MtiFS::IsVhdlLanguage", -1);
    Tcl_IncrRefCount(statePtr->isVhdlCmd);
    statePtr->isVerilogCmd =
	    Tcl_NewStringObj("::MtiFS::IsVerilogLanguage", -1);
    Tcl_IncrRefCount(statePtr->isVerilogCmd);
    InitRules(&statePtr->verilog, LANG_VERILOG, 0, verilogKeywords);
    InitRules(&statePtr->vhdl, LANG_VHDL, 1, vhdlKeywords);

    Tcl_CreateObjCommand(interp, "::tok2column", tclprim_tok2column,
	    statePtr, DeleteTok2column);
    return Tcl_PkgProvideEx(interp, "tok2column", "1.0", NULL);
}

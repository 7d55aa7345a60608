// The ppc model language: InferSpark's @Model grammar (seed 003, figure
// "InferSpark model definition syntax") with the Scala spellings real models use
// and ppc's extensions (more families, if/else, match). docs/language.md is the
// reference; semantic rules (which names are distributions, which types go
// where) live in frontend/, so that errors can say precisely what is wrong.
//
// Newlines: the lexer emits NL tokens; frontend/TokenFilter.cpp keeps only those
// that separate statements (Scala's rule: the previous token can end a
// statement, the next can begin one, and we are not inside parentheses).
grammar Model;

model
    : sep* AT ID CLASS ID LPAREN paramList? RPAREN sep* LBRACE statements RBRACE sep* EOF
    ;

paramList
    : param (COMMA param)*
    ;

param
    : ID COLON ID (ASSIGN expr)?
    ;

// A class body or a block: statements separated by ';' or newlines. A block's
// last item is its value.
statements
    : sep* (blockItem (sep+ blockItem)* sep*)?
    ;

blockItem
    : valDef
    | expr
    ;

valDef
    : VAL ID (COLON ID)? ASSIGN expr
    ;

sep : SEMI | NL ;

expr
    : IF LPAREN expr RPAREN expr ELSE expr                       # ifExpr
    | FOR LPAREN binder=(ID | UNDERSCORE) LARROW expr RPAREN YIELD expr   # forExpr
    | lambda                                                    # lambdaExpr
    | infixExpr (MATCH LBRACE caseClause+ RBRACE)?              # matchOrInfix
    ;

lambda
    : binder=(ID | UNDERSCORE) ARROW expr
    ;

caseClause
    : CASE pattern=(INT | UNDERSCORE) ARROW statements
    ;

infixExpr
    : prefixExpr                                                # prefix
    | infixExpr op=(STAR | SLASH) infixExpr                     # mulDiv
    | infixExpr op=(PLUS | MINUS) infixExpr                     # addSub
    | infixExpr op=(UNTIL | TO) infixExpr                       # range
    ;

prefixExpr
    : op=(MINUS | PLUS) prefixExpr
    | postfixExpr
    ;

postfixExpr
    : primary                                                   # atom
    | postfixExpr DOT ID LPAREN expr RPAREN                     # methodCall
    | postfixExpr DOT ID LBRACE binder=(ID | UNDERSCORE) ARROW statements RBRACE   # methodBlock
    | postfixExpr LPAREN (expr (COMMA expr)*)? RPAREN           # apply
    ;

primary
    : INT                                                       # intLit
    | FLOAT                                                     # floatLit
    | ID                                                        # name
    | QUESTION                                                  # unknownSize
    | UNDERSCORE                                                # placeholder
    | LPAREN expr RPAREN                                        # paren
    | LBRACE statements RBRACE                                  # block
    ;

// ---- Lexer ----
AT         : '@' ;
CLASS      : 'class' ;
VAL        : 'val' ;
IF         : 'if' ;
ELSE       : 'else' ;
MATCH      : 'match' ;
CASE       : 'case' ;
FOR        : 'for' ;
YIELD      : 'yield' ;
UNTIL      : 'until' ;
TO         : 'to' ;

LPAREN     : '(' ;
RPAREN     : ')' ;
LBRACE     : '{' ;
RBRACE     : '}' ;
COMMA      : ',' ;
COLON      : ':' ;
SEMI       : ';' ;
DOT        : '.' ;
ARROW      : '=>' ;
LARROW     : '<-' ;
ASSIGN     : '=' ;
PLUS       : '+' ;
MINUS      : '-' ;
STAR       : '*' ;
SLASH      : '/' ;
QUESTION   : '?' ;
UNDERSCORE : '_' ;

FLOAT
    : DIGITS '.' DIGITS EXPONENT? [dDfF]?
    | DIGITS EXPONENT [dDfF]?
    | DIGITS [dDfF]
    | '.' DIGITS EXPONENT? [dDfF]?
    ;
INT        : DIGITS [lL]? ;
ID         : [a-zA-Z] [a-zA-Z0-9_]* | '_' [a-zA-Z0-9_]+ ;

fragment DIGITS   : [0-9]+ ;
fragment EXPONENT : [eE] [+-]? DIGITS ;

NL            : '\r'? '\n' ;
WS            : [ \t\f\r]+ -> skip ;
LINE_COMMENT  : '//' ~[\r\n]* -> skip ;
// Scala block comments nest.
// An inner '/*' always opens a nested comment, so an unbalanced one leaves
// the outer comment unterminated (reported by the token filter), as in Scala.
BLOCK_COMMENT : '/*' (BLOCK_COMMENT | '/' ~'*' | ~'/')*? '*/' -> skip ;
ERROR_CHAR : . ;

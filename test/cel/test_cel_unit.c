/*
 * test_cel_unit.c - the CEL module piece by piece: cel-go's parser and checker issue texts
 * (parser/parser_test.go, checker/checker_test.go), evaluation results and errors, optional
 * values, bindings backed by caller-owned lists and maps, the cost limit, and the contract
 * that a scratch is reused across evaluations.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/internal/cel.h"

static struct ks_cel_env *env_x(void)
{
    struct ks_cel_env *env;
    cr_assert_eq(ks_cel_env_create(KS_CEL_LIB_KUBERNETES | KS_CEL_LIB_BINDINGS, &env), 0);
    struct ks_cel_field_decl f[] = {{"name", ks_cel_type_kind(env, KS_CEL_STRING)}};
    const struct ks_cel_type *obj = ks_cel_type_object(env, "test.Obj", f, 1);
    cr_assert_eq(ks_cel_env_declare(env, "x", obj), 0);
    cr_assert_eq(ks_cel_env_declare(env, "l", ks_cel_type_list(env, ks_cel_type_kind(env, KS_CEL_INT))), 0);
    cr_assert_eq(ks_cel_env_declare(env, "m",
                                    ks_cel_type_map(env, ks_cel_type_kind(env, KS_CEL_STRING),
                                                    ks_cel_type_kind(env, KS_CEL_INT))),
                 0);
    cr_assert_eq(ks_cel_env_declare(env, "x", obj), -EEXIST);
    return env;
}

static void expect_compile_error(const char *expr, const char *want)
{
    struct ks_cel_env *env = env_x();
    struct ks_cel_program *p = NULL;
    char *msg = NULL;
    int rc = ks_cel_compile(env, expr, strlen(expr), &p, &msg);
    cr_expect_eq(rc, -EINVAL, "%s: compiled", expr);
    if (rc == -EINVAL)
        cr_expect_str_eq(msg, want, "%s:\n got: %s\nwant: %s", expr, msg, want);
    free(msg);
    ks_cel_program_destroy(p);
    ks_cel_env_destroy(env);
}

Test(cel_parse, literal_range_errors)
{
    expect_compile_error("0xFFFFFFFFFFFFFFFFF",
                         "ERROR: <input>:1:1: invalid int literal\n | 0xFFFFFFFFFFFFFFFFF\n | ^");
    expect_compile_error("0xFFFFFFFFFFFFFFFFFu",
                         "ERROR: <input>:1:1: invalid uint literal\n | 0xFFFFFFFFFFFFFFFFFu\n | ^");
    expect_compile_error("1.99e90000009",
                         "ERROR: <input>:1:1: invalid double literal\n | 1.99e90000009\n | ^");
}

Test(cel_parse, syntax_errors)
{
    expect_compile_error("a | b", "ERROR: <input>:1:3: Syntax error: token recognition error at: '| '\n"
                                  " | a | b\n | ..^\n"
                                  "ERROR: <input>:1:5: Syntax error: extraneous input 'b' expecting <EOF>\n"
                                  " | a | b\n | ....^");
    expect_compile_error("1 + $",
                         "ERROR: <input>:1:5: Syntax error: token recognition error at: '$'\n"
                         " | 1 + $\n | ....^\n"
                         "ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {'[', '{', "
                         "'(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, "
                         "BYTES, IDENTIFIER}\n | 1 + $\n | .....^");
    expect_compile_error(
        "{", "ERROR: <input>:1:2: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '}', "
             "'(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
             "STRING, BYTES, IDENTIFIER}\n | {\n | .^");
    expect_compile_error("{\"a\": 1}.\"a\"",
                         "ERROR: <input>:1:10: Syntax error: no viable alternative at input "
                         "'.\"a\"'\n | {\"a\": 1}.\"a\"\n | .........^");
    expect_compile_error("\"\\xFh\"",
                         "ERROR: <input>:1:1: Syntax error: token recognition error at: '\"\\xFh'\n"
                         " | \"\\xFh\"\n | ^\n"
                         "ERROR: <input>:1:6: Syntax error: token recognition error at: '\"'\n"
                         " | \"\\xFh\"\n | .....^\n"
                         "ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting {'[', '{', "
                         "'(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
                         "STRING, BYTES, IDENTIFIER}\n | \"\\xFh\"\n | ......^");
    expect_compile_error(
        "*@a | b",
        "ERROR: <input>:1:1: Syntax error: extraneous input '*' expecting {'[', '{', '(', '.', '-', "
        "'!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
        " | *@a | b\n | ^\n"
        "ERROR: <input>:1:2: Syntax error: token recognition error at: '@'\n | *@a | b\n | .^\n"
        "ERROR: <input>:1:5: Syntax error: token recognition error at: '| '\n | *@a | b\n | ....^");
}

Test(cel_parse, reserved_and_macro_errors)
{
    expect_compile_error("as", "ERROR: <input>:1:1: reserved identifier: as\n | as\n | ^");
    expect_compile_error("while", "ERROR: <input>:1:1: reserved identifier: while\n | while\n | ^");
    expect_compile_error("has(m)",
                         "ERROR: <input>:1:5: invalid argument to has() macro\n | has(m)\n | ....^");
    expect_compile_error(
        "m.filter(a.b, false)",
        "ERROR: <input>:1:11: argument is not an identifier\n | m.filter(a.b, false)\n | ..........^");
    expect_compile_error("1.all(2, 3)",
                         "ERROR: <input>:1:7: argument must be a simple name\n | 1.all(2, 3)\n | ......^");
    expect_compile_error("m.map(__result__, __result__)",
                         "ERROR: <input>:1:7: iteration variable overwrites accumulator variable\n"
                         " | m.map(__result__, __result__)\n | ......^");
    expect_compile_error(
        "[1].all(i, i, i > 0)",
        "ERROR: <input>:1:12: duplicate variable name: i\n | [1].all(i, i, i > 0)\n | ...........^");
}

Test(cel_parse, limits)
{
    char buf[2048];
    size_t n = 0;
    for (int i = 0; i < 260; i++)
        buf[n++] = '(';
    buf[n++] = '1';
    for (int i = 0; i < 260; i++)
        buf[n++] = ')';
    buf[n] = 0;
    expect_compile_error(buf, "ERROR: <input>:-1:0: expression recursion limit exceeded: 250");
    char *big = malloc(100002);
    memset(big, ' ', 100001);
    big[0] = '1';
    big[100001] = 0;
    expect_compile_error(big,
                         "ERROR: <input>:-1:0: expression code point size exceeds limit: size: 100001, limit "
                         "100000");
    free(big);
}

Test(cel_check, issue_texts)
{
    expect_compile_error("foo",
                         "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo\n | ^");
    expect_compile_error(
        "fun()", "ERROR: <input>:1:4: undeclared reference to 'fun' (in container '')\n | fun()\n | ...^");
    expect_compile_error("'string'.fun()",
                         "ERROR: <input>:1:13: undeclared reference to 'fun' (in container '')\n"
                         " | 'string'.fun()\n | ............^");
    expect_compile_error("1 + 'a'",
                         "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, "
                         "string)'\n | 1 + 'a'\n | ..^");
    expect_compile_error("'a'.size(1)",
                         "ERROR: <input>:1:9: found no matching overload for 'size' applied to "
                         "'string.(int)'\n | 'a'.size(1)\n | ........^");
    expect_compile_error("x.undefined == x.name",
                         "ERROR: <input>:1:2: undefined field 'undefined'\n | x.undefined == x.name\n | .^");
    expect_compile_error("1.foo",
                         "ERROR: <input>:1:2: type 'int' does not support field selection\n | 1.foo\n | .^");
    expect_compile_error("[1, 'a']",
                         "ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a']\n | ....^");
    expect_compile_error(
        "[].all(e, 1)",
        "ERROR: <input>:1:11: expected type 'bool' but found 'int'\n | [].all(e, 1)\n | ..........^");
    expect_compile_error(
        "1.exists(e, true)",
        "ERROR: <input>:1:1: expression of type 'int' cannot be range of a comprehension (must be "
        "list, map, or dynamic)\n | 1.exists(e, true)\n | ^");
    expect_compile_error(
        "l.map(e, e + 'a')",
        "ERROR: <input>:1:12: found no matching overload for '_+_' applied to '(int, string)'\n"
        " | l.map(e, e + 'a')\n | ...........^");
    /* the literal validators and the program's constant folding */
    expect_compile_error("duration('1x')",
                         "ERROR: <input>:1:10: invalid duration argument\n | duration('1x')\n | .........^");
    expect_compile_error(
        "timestamp('x')",
        "ERROR: <input>:1:11: invalid timestamp argument\n | timestamp('x')\n | ..........^");
    expect_compile_error(
        "'a'.matches('(')",
        "ERROR: <input>:1:13: invalid matches argument\n | 'a'.matches('(')\n | ............^");
    expect_compile_error("int('x')", "type conversion error from 'string' to 'int'");
    expect_compile_error("'a'.find('(')", "error parsing regexp: missing closing ): `(`");
}

/* Evaluate @expr with the bindings of env_x(): 0 and the value's text, or the error. */
static int eval_text(const char *expr, unsigned flags, const struct ks_cel_binding *b, uint32_t nb,
                     uint64_t limit, char *out, size_t outlen, uint64_t *cost)
{
    struct ks_cel_env *env = env_x();
    struct ks_cel_program *p;
    char *msg = NULL;
    int rc = ks_cel_compile_flags(env, expr, strlen(expr), flags, &p, &msg);
    cr_assert_eq(rc, 0, "%s: %s", expr, msg ? msg : "");
    struct ks_cel_scratch *s;
    cr_assert_eq(ks_cel_scratch_create(&s), 0);
    struct ks_cel_value v;
    uint64_t c = 0;
    rc = ks_cel_eval(p, b, nb, s, limit, &v, &c, out, outlen);
    if (rc == 0)
        ks_cel_value_format(&v, out, outlen);
    if (cost)
        *cost = c;
    ks_cel_scratch_destroy(s);
    ks_cel_program_destroy(p);
    ks_cel_env_destroy(env);
    return rc;
}

static void expect_value(const char *expr, const char *want)
{
    char out[512];
    int rc = eval_text(expr, 0, NULL, 0, 0, out, sizeof(out), NULL);
    cr_expect_eq(rc, 0, "%s: %s", expr, out);
    if (!rc)
        cr_expect_str_eq(out, want, "%s: got %s, want %s", expr, out, want);
}

static void expect_error(const char *expr, const char *want)
{
    char out[512];
    int rc = eval_text(expr, 0, NULL, 0, 0, out, sizeof(out), NULL);
    cr_expect_eq(rc, -EINVAL, "%s: got %s", expr, out);
    if (rc)
        cr_expect_str_eq(out, want, "%s: error %s, want %s", expr, out, want);
}

Test(cel_eval, values)
{
    expect_value("1 + 2 * 3", "7");
    expect_value("-9223372036854775808", "-9223372036854775808");
    expect_value("--1", "1");
    expect_value("2u + 3u", "5u");
    expect_value("1.5 * 2.0", "3.0");
    expect_value("'a' + 'b'", "\"ab\"");
    expect_value("b'\\x01' + b'\\x02'", "b\"\\x01\\x02\"");
    expect_value("size('héllo')", "5");
    expect_value("dyn(1) == 1.0 && dyn(1u) == 1 && 2 > 1.5 && 1u < 2", "true");
    expect_value("[1, 2] + [3]", "[1, 2, 3]");
    expect_value("{'a': 1}['a']", "1");
    expect_value("'b' in {'a': 1, 'b': 2}", "true");
    expect_value("2 in [1, 2, 3]", "true");
    expect_value("[1, 2, 3].map(x, x * 2)", "[2, 4, 6]");
    expect_value("[1, 2, 3].filter(x, x > 1)", "[2, 3]");
    expect_value("[1, 2, 3].exists_one(x, x == 2)", "true");
    expect_value("{'a': 1, 'b': 2}.all(k, v, v > 0)", "true");
    expect_value("[1, 2].transformList(i, v, i + v)", "[1, 3]");
    expect_value("cel.bind(x2, 5, x2 * x2)", "25");
    expect_value("string(1.5) + string(10u) + string(true)", "\"1.510true\"");
    expect_value("string(1e21)", "\"1e+21\"");
    expect_value("int('-12') + int(2.9) + int(uint(3))", "-7");
    expect_value("double('1e3')", "1000.0");
    expect_value("type(1) == int && type('a') == string && type([]) == list", "true");
    expect_value("duration('1h30m')", "duration(\"5400s\")");
    expect_value("timestamp('2024-01-02T03:04:05Z') + duration('1s')", "timestamp(\"2024-01-02T03:04:06Z\")");
    expect_value("timestamp('2024-03-10T12:00:00Z').getHours('America/Los_Angeles')", "5");
    expect_value("timestamp('2024-01-01T00:00:00Z').getDayOfWeek()", "1");
    expect_value("'abc'.matches('^a') && 'x-1'.matches('[0-9]')", "true");
    expect_value("true ? 1 : 2", "1");
    expect_value("false || 1 / 0 == 0 || true", "true");
    expect_value("1 / 0 == 0 && false", "false");
    expect_value("{'a': 1}.?a.orValue(5)", "1");
    expect_value("{'a': 1}.?b.orValue(5)", "5");
    expect_value("[1, 2][?5].hasValue()", "false");
    expect_value("optional.of(3).optMap(v, v + 1)", "optional.of(4)");
    expect_value("[?optional.none(), ?optional.of(1)]", "[1]");
    expect_value("'hello'.charAt(1) + 'HeLLo'.lowerAscii() + ' x '.trim()", "\"ehellox\"");
    expect_value("'a,b,c'.split(',').size() + 'aaa'.indexOf('a', 1) + 'abc'.lastIndexOf('c')", "6");
    expect_value("['a', 'b'].join('-') + 'abc'.substring(1, 2) + 'aXa'.replace('a', 'b')", "\"a-bbbXb\"");
    expect_value("strings.quote('a\"b')", "\"\\\"a\\\\\\\"b\\\"\"");
    expect_value("quantity('1Gi').compareTo(quantity('1G'))", "1");
    expect_value("semver('1.2.3-rc.1').isLessThan(semver('1.2.3'))", "true");
    expect_value("sets.intersects([1, 2], [2, 3])", "true");
    expect_value("[3, 1, 2].max() + [3, 1, 2].min()", "4");
}

Test(cel_eval, errors)
{
    expect_error("1 / 0", "division by zero");
    expect_error("1 % 0", "modulus by zero");
    expect_error("9223372036854775807 + 1", "integer overflow");
    expect_error("0u - 1u", "unsigned integer overflow");
    expect_error("[1][5]", "index out of bounds: 5");
    expect_error("{'a': 1}['b']", "no such key: b");
    expect_error("dyn(1) + 'a'", "no such overload");
    expect_error("dyn('a') + 1", "no such overload");
    expect_error("dyn(true) + 1", "no such overload: _+_");
    expect_error("optional.none().value()", "optional.none() dereference");
    expect_error("'abc'.charAt(4)", "index out of range: 4");
    expect_error("'abc'.substring(2, 1)", "invalid substring range. start: 2, end: 1");
    expect_error("quantity(string('x'))", "quantities must match the regular expression "
                                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    expect_error("semver(string('1.2'))", "No Major.Minor.Patch elements found");
    expect_error("dyn(1).exists(x, x > 0)", "got 'types.Int', expected iterable type");
    expect_error("x.name == 'a'", "no such attribute(s): x");
    expect_error("timestamp('2024-01-01T00:00:00Z').getHours('Mars/Base')", "unknown time zone Mars/Base");
}

Test(cel_eval, unchecked_dispatch)
{
    char out[256];
    cr_assert_eq(eval_text("dyn([1, 'a']).map(v, type(v))", KS_CEL_COMPILE_UNCHECKED, NULL, 0, 0, out,
                           sizeof(out), NULL),
                 0);
    cr_expect_str_eq(out, "[int, string]");
    cr_assert_eq(
        eval_text("f_unknown(1) || true", KS_CEL_COMPILE_UNCHECKED, NULL, 0, 0, out, sizeof(out), NULL), 0);
    cr_expect_str_eq(out, "true");
    cr_assert_eq(eval_text("[1, 'a'][1]", KS_CEL_COMPILE_DYN_AGGREGATES, NULL, 0, 0, out, sizeof(out), NULL),
                 0);
    cr_expect_str_eq(out, "\"a\"");
    cr_assert_eq(eval_text("int('x')", KS_CEL_COMPILE_NO_FOLD, NULL, 0, 0, out, sizeof(out), NULL), -EINVAL);
    cr_expect_str_eq(out, "type conversion error from 'string' to 'int'");
}

Test(cel_eval, bindings_from_caller_memory)
{
    struct ks_cel_value items[3];
    for (int i = 0; i < 3; i++) {
        items[i].kind = KS_CEL_INT;
        items[i].v.i = i + 1;
    }
    struct ks_cel_array arr = {items, 3};
    struct ks_cel_binding b[1] = {{.name = "l", .value = {.kind = KS_CEL_LIST}}};
    b[0].value.v.host.ops = &ks_cel_array_ops;
    b[0].value.v.host.obj = &arr;
    char out[256];
    cr_assert_eq(eval_text("l.map(v, v * 10).sum() + size(l) + l[2]", 0, b, 1, 0, out, sizeof(out), NULL), 0,
                 "%s", out);
    cr_expect_str_eq(out, "66");
}

Test(cel_eval, cost_limit)
{
    char out[256];
    uint64_t cost;
    cr_assert_eq(eval_text("[1, 2, 3].map(x, x * 2)", 0, NULL, 0, 0, out, sizeof(out), &cost), 0);
    /* per element: @result 1, [x * 2] 10 + x 1 + _*_ 1, _+_ 1; then the result's @result */
    cr_expect_eq(cost, 3 * 14 + 1, "cost %" PRIu64, cost);
    cr_assert_eq(eval_text("[1, 2, 3].map(x, x * 2)", 0, NULL, 0, 5, out, sizeof(out), &cost), -EINVAL);
    cr_expect_str_eq(out, "operation cancelled: actual cost limit exceeded");
}

Test(cel_eval, scratch_reuse_and_types)
{
    struct ks_cel_env *env = env_x();
    struct ks_cel_program *p;
    char *msg;
    const char *e = "m.filter(k, m[k] > 1).map(k, k + '!')";
    cr_assert_eq(ks_cel_compile(env, e, strlen(e), &p, &msg), 0);
    cr_expect_eq(ks_cel_type_kind_of(ks_cel_program_type(p)), KS_CEL_LIST);
    struct ks_cel_scratch *s;
    cr_assert_eq(ks_cel_scratch_create(&s), 0);
    struct ks_cel_value keys[2], vals[2];
    keys[0].kind = keys[1].kind = KS_CEL_STRING;
    keys[0].v.str.p = "a";
    keys[1].v.str.p = "b";
    keys[0].v.str.len = keys[1].v.str.len = 1;
    vals[0].kind = vals[1].kind = KS_CEL_INT;
    vals[0].v.i = 1;
    vals[1].v.i = 2;
    /* a map binding made by the module: a map literal evaluated in another scratch */
    struct ks_cel_program *mp;
    cr_assert_eq(ks_cel_compile(env, "{'a': 1, 'b': 2}", 16, &mp, &msg), 0);
    struct ks_cel_scratch *ms;
    cr_assert_eq(ks_cel_scratch_create(&ms), 0);
    struct ks_cel_binding b = {.name = "m"};
    char err[128];
    cr_assert_eq(ks_cel_eval(mp, NULL, 0, ms, 0, &b.value, NULL, err, sizeof(err)), 0);
    for (int i = 0; i < 100; i++) {
        struct ks_cel_value v;
        cr_assert_eq(ks_cel_eval(p, &b, 1, s, 0, &v, NULL, err, sizeof(err)), 0, "%s", err);
        char out[64];
        ks_cel_value_format(&v, out, sizeof(out));
        cr_assert_str_eq(out, "[\"b!\"]");
    }
    ks_cel_scratch_destroy(ms);
    ks_cel_program_destroy(mp);
    ks_cel_scratch_destroy(s);
    ks_cel_program_destroy(p);
    ks_cel_env_destroy(env);
}

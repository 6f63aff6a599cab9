#include <gtest/gtest.h>

#include "config/repo_files.hpp"
#include "config_test_support.hpp"
#include "rpmirror/config/config.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

VariableContext vars_of(std::map<std::string, std::string, std::less<>> values) {
    VariableContext vars;
    vars.values = std::move(values);
    return vars;
}

std::string substituted(std::string_view text, const VariableContext& vars) {
    auto result = substitute_variables(text, vars);
    EXPECT_TRUE(result) << result.error().to_string();
    return result ? *result : std::string("<error>");
}

// Options that read nothing from the host: fixed machine, empty environment, no vars directories.
VariableOptions isolated_options() {
    VariableOptions options;
    options.machine = "x86_64";
    options.environment = std::map<std::string, std::string>{};
    options.varsdirs.clear();
    return options;
}

TEST(ConfigVariables, PlainAndBracedReferences) {
    const VariableContext vars = vars_of({{"releasever", "40"}, {"basearch", "x86_64"}});
    EXPECT_EQ(substituted("f$releasever/$basearch/os", vars), "f40/x86_64/os");
    EXPECT_EQ(substituted("${releasever}x${basearch}", vars), "40xx86_64");
    EXPECT_EQ(substituted("$basearch$releasever", vars), "x86_6440");
    EXPECT_EQ(substituted("no variables", vars), "no variables");
}

TEST(ConfigVariables, NameEndsAtTheFirstNonNameCharacter) {
    const VariableContext vars = vars_of({{"a", "A"}, {"a_b", "AB"}});
    EXPECT_EQ(substituted("$a-b", vars), "A-b");
    EXPECT_EQ(substituted("$a_b.x", vars), "AB.x");
}

TEST(ConfigVariables, DefaultFormUsesWordIffUnsetOrEmpty) {
    const VariableContext vars = vars_of({{"set", "value"}, {"empty", ""}});
    EXPECT_EQ(substituted("${set:-word}", vars), "value");
    EXPECT_EQ(substituted("${empty:-word}", vars), "word");
    EXPECT_EQ(substituted("${unset:-word}", vars), "word");
    EXPECT_EQ(substituted("${unset:-}", vars), "");
}

TEST(ConfigVariables, AlternativeFormUsesWordIffSetAndNonEmpty) {
    const VariableContext vars = vars_of({{"set", "value"}, {"empty", ""}});
    EXPECT_EQ(substituted("<${set:+word}>", vars), "<word>");
    EXPECT_EQ(substituted("<${empty:+word}>", vars), "<>");
    EXPECT_EQ(substituted("<${unset:+word}>", vars), "<>");
}

TEST(ConfigVariables, NestedReferencesInWords) {
    const VariableContext vars =
        vars_of({{"releasever", "9.4"}, {"releasever_major", "9"}, {"contentdir", "centos"}});
    EXPECT_EQ(substituted("${stream:-${releasever_major}-stream}", vars), "9-stream");
    EXPECT_EQ(substituted("${a:-${b:-${contentdir}}}/x", vars), "centos/x");
    EXPECT_EQ(substituted("${contentdir:+/${releasever}/$contentdir}", vars), "/9.4/centos");
    // The unused word may name undefined variables: it is never evaluated.
    EXPECT_EQ(substituted("${contentdir:-$nowhere}", vars), "centos");
    EXPECT_EQ(substituted("${nowhere:+${never}}", vars), "");
}

TEST(ConfigVariables, DollarWithoutANameIsLiteral) {
    const VariableContext vars = vars_of({{"a", "A"}});
    EXPECT_EQ(substituted("cost: 5$ $ $-x $", vars), "cost: 5$ $ $-x $");
    EXPECT_EQ(substituted("}{$a}", vars), "}{A}");
}

TEST(ConfigVariables, UndefinedVariableIsAnErrorNamingIt) {
    const VariableContext vars = vars_of({{"basearch", "x86_64"}});
    for (const char* text : {"http://h/$releasever/$basearch", "http://h/${releasever}/",
                             "${basearch:+${releasever}}"}) {
        SCOPED_TRACE(text);
        auto result = substitute_variables(text, vars);
        ASSERT_FALSE(result);
        EXPECT_EQ(result.error().code, ErrorCode::BadInput);
        EXPECT_EQ(result.error().to_string(),
                  "undefined variable 'releasever' in \"" + std::string(text) + "\"");
    }
}

TEST(ConfigVariables, UnterminatedOrEmptyBracesAreErrors) {
    const VariableContext vars = vars_of({{"a", "A"}});
    auto unterminated = substitute_variables("x${a:-word", vars);
    ASSERT_FALSE(unterminated);
    EXPECT_EQ(unterminated.error().to_string(), "unterminated '${' in \"x${a:-word\"");
    auto empty = substitute_variables("x${}", vars);
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().to_string(), "malformed variable reference at '${}' in \"x${}\"");
    EXPECT_FALSE(substitute_variables("${a", vars));
    EXPECT_FALSE(substitute_variables("${a:?x}", vars));
}

TEST(ConfigVariables, BaseArchAsDnfMapsIt) {
    EXPECT_EQ(base_arch_for("x86_64"), "x86_64");
    EXPECT_EQ(base_arch_for("amd64"), "x86_64");
    EXPECT_EQ(base_arch_for("i686"), "i386");
    EXPECT_EQ(base_arch_for("i586"), "i386");
    EXPECT_EQ(base_arch_for("armv7l"), "armhfp");
    EXPECT_EQ(base_arch_for("aarch64"), "aarch64");
    EXPECT_EQ(base_arch_for("ppc64le"), "ppc64le");
    EXPECT_EQ(base_arch_for("s390x"), "s390x");
    EXPECT_EQ(base_arch_for("riscv64"), "riscv64");
    EXPECT_EQ(base_arch_for("unheard-of"), "unheard-of");
}

TEST(ConfigVariables, DetectedDefaultsComeFromTheMachine) {
    VariableOptions options = isolated_options();
    options.machine = "i686";
    auto vars = make_variable_context(options);
    ASSERT_TRUE(vars) << vars.error().to_string();
    EXPECT_EQ(*vars->find("arch"), "i686");
    EXPECT_EQ(*vars->find("basearch"), "i386");
    EXPECT_EQ(vars->find("releasever"), nullptr);  // never detected
    EXPECT_EQ(vars->find("releasever_major"), nullptr);
}

TEST(ConfigVariables, UnameIsAskedWhenNoMachineIsGiven) {
    VariableOptions options = isolated_options();
    options.machine.reset();
    auto vars = make_variable_context(options);
    ASSERT_TRUE(vars) << vars.error().to_string();
    ASSERT_NE(vars->find("arch"), nullptr);
    EXPECT_FALSE(vars->find("arch")->empty());
    EXPECT_EQ(*vars->find("basearch"), base_arch_for(*vars->find("arch")));
}

TEST(ConfigVariables, VarsdirFilesGiveFirstLineValues) {
    test::TempDir dir;
    dir.write("vars1/contentdir", "centos\nignored second line\n");
    dir.write("vars1/stream", "9-stream");  // no newline at all
    dir.write("vars1/not.a.name", "skipped");
    dir.write("vars1/crlf", "windows\r\n");
    dir.write("vars2/contentdir", "altarch\n");  // a later directory wins
    VariableOptions options = isolated_options();
    options.varsdirs = {dir / "vars1", dir / "vars2", dir / "missing"};
    auto vars = make_variable_context(options);
    ASSERT_TRUE(vars) << vars.error().to_string();
    EXPECT_EQ(*vars->find("contentdir"), "altarch");
    EXPECT_EQ(*vars->find("stream"), "9-stream");
    EXPECT_EQ(*vars->find("crlf"), "windows");
    EXPECT_EQ(vars->find("not.a.name"), nullptr);
}

TEST(ConfigVariables, EnvironmentOverridesVarsdirAndDetection) {
    test::TempDir dir;
    dir.write("vars/contentdir", "from-file\n");
    dir.write("vars/releasever", "8\n");
    VariableOptions options = isolated_options();
    options.varsdirs = {dir / "vars"};
    options.environment = std::map<std::string, std::string>{
        {"DNF_VAR_contentdir", "from-env"},
        {"DNF_VAR_basearch", "aarch64"},
        {"DNF0", "zero"},
        {"DNF9", "nine"},
        {"DNF10", "not a dnf digit variable"},
        {"DNF_VAR_bad-name", "skipped"},
        {"PATH", "/usr/bin"},
    };
    auto vars = make_variable_context(options);
    ASSERT_TRUE(vars) << vars.error().to_string();
    EXPECT_EQ(*vars->find("contentdir"), "from-env");
    EXPECT_EQ(*vars->find("basearch"), "aarch64");
    EXPECT_EQ(*vars->find("arch"), "x86_64");
    EXPECT_EQ(*vars->find("DNF0"), "zero");
    EXPECT_EQ(*vars->find("DNF9"), "nine");
    EXPECT_EQ(*vars->find("releasever"), "8");
    EXPECT_EQ(vars->find("DNF10"), nullptr);
    EXPECT_EQ(vars->find("bad-name"), nullptr);
    EXPECT_EQ(vars->find("PATH"), nullptr);
    EXPECT_EQ(substituted("$DNF0-${DNF9}", *vars), "zero-nine");
}

TEST(ConfigVariables, CommandLineOverridesEnvironment) {
    VariableOptions options = isolated_options();
    options.environment = std::map<std::string, std::string>{{"DNF_VAR_releasever", "38"},
                                                             {"DNF_VAR_basearch", "ppc64le"}};
    options.releasever = "40";
    options.basearch = "s390x";
    auto vars = make_variable_context(options);
    ASSERT_TRUE(vars) << vars.error().to_string();
    EXPECT_EQ(*vars->find("releasever"), "40");
    EXPECT_EQ(*vars->find("basearch"), "s390x");
}

TEST(ConfigVariables, ReleaseverMajorAndMinorAreDerived) {
    VariableOptions options = isolated_options();
    options.releasever = "9.4.1";
    auto vars = make_variable_context(options);
    ASSERT_TRUE(vars);
    EXPECT_EQ(*vars->find("releasever_major"), "9");
    EXPECT_EQ(*vars->find("releasever_minor"), "4.1");

    options.releasever = "40";
    vars = make_variable_context(options);
    ASSERT_TRUE(vars);
    EXPECT_EQ(*vars->find("releasever_major"), "40");
    EXPECT_EQ(*vars->find("releasever_minor"), "");
}

TEST(ConfigVariables, ProcessEnvironmentIsReadWhenNoMapIsGiven) {
    ASSERT_EQ(::setenv("DNF_VAR_rpmirror_config_test", "from-environ", 1), 0);
    VariableOptions options = isolated_options();
    options.environment.reset();
    auto vars = make_variable_context(options);
    ::unsetenv("DNF_VAR_rpmirror_config_test");
    ASSERT_TRUE(vars) << vars.error().to_string();
    ASSERT_NE(vars->find("rpmirror_config_test"), nullptr);
    EXPECT_EQ(*vars->find("rpmirror_config_test"), "from-environ");
}

TEST(ConfigVariables, UndefinedVariableInAUrlKeyNamesVariableKeyAndRepo) {
    test::TempDir dir;
    const auto file = dir.write("f.repo",
                                "[fedora]\nname=Fedora $releasever\n"
                                "metalink=https://mirrors.fedoraproject.org/metalink?repo=fedora-"
                                "$releasever&arch=$basearch\n");
    VariableContext vars = vars_of({{"basearch", "x86_64"}, {"arch", "x86_64"}});
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, vars, warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().code, ErrorCode::BadInput);
    EXPECT_EQ(repos.error().to_string(),
              file.string() +
                  ": line 3: key 'metalink' of repo 'fedora' uses undefined variable 'releasever' "
                  "(set it with --releasever)");

    for (const char* key : {"baseurl", "mirrorlist", "gpgkey"}) {
        SCOPED_TRACE(key);
        const auto other =
            dir.write("o.repo", std::string("[o]\n") + key + "=http://h/$contentdir\n");
        auto failed = read_repo_file(other, vars, warnings);
        ASSERT_FALSE(failed);
        EXPECT_EQ(failed.error().message, std::string("line 2: key '") + key +
                                              "' of repo 'o' uses undefined variable 'contentdir'");
    }
}

TEST(ConfigVariables, UndefinedVariableOutsideUrlKeysIsKeptLiterally) {
    test::TempDir dir;
    const auto file = dir.write(
        "f.repo", "[r]\nname=Repo $undefined ${also}\nbaseurl=http://127.0.0.1/\nuser_agent=${x\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, vars_of({}), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repos->front().name, "Repo $undefined ${also}");
    EXPECT_EQ(repos->front().user_agent, "${x");
}

// Found fuzzing substitution: 40 nested, unterminated `${a:-` (kept literally outside URL keys)
// were re-parsed by every enclosing reference, 2^40 steps; 22 levels already took 71 s.
TEST(ConfigVariables, NestedUnterminatedReferencesAreKeptInLinearTime) {
    const std::string nested = test::read_file(
        test::source_root() / "tests/data/fuzz/fuzz_variables/nested-unterminated-defaults.txt");
    ASSERT_EQ(nested.size(), 40u * 5u);
    test::TempDir dir;
    const auto file = dir.write("f.repo", "[r]\nbaseurl=http://127.0.0.1/\nname=" + nested + "\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, vars_of({}), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repos->front().name, nested);

    auto in_url = substitute_variables(nested, vars_of({}));
    ASSERT_FALSE(in_url);
    // In a URL key the same text is an error (40 levels are also deeper than the cap).
    EXPECT_EQ(in_url.error().code, ErrorCode::BadInput);
    auto shallow = substitute_variables(nested.substr(0, 5 * 10), vars_of({}));
    ASSERT_FALSE(shallow);
    EXPECT_NE(shallow.error().message.find("unterminated '${'"), std::string::npos)
        << shallow.error().message;
}

std::string nested_defaults(std::size_t levels) {
    std::string text;
    for (std::size_t level = 0; level < levels; ++level)
        text += "${a:-";
    text += "x";
    text.append(levels, '}');
    return text;
}

// Found fuzzing substitution: the recursive-descent parser recursed once per nesting level, so
// 300,000 nested `${a:-` overflowed the stack. Nesting is capped at 32 levels.
TEST(ConfigVariables, NestingDeeperThan32LevelsIsRefusedNotAStackOverflow) {
    const VariableContext vars = vars_of({});
    EXPECT_EQ(substituted(nested_defaults(32), vars), "x");
    auto too_deep = substitute_variables(nested_defaults(33), vars);
    ASSERT_FALSE(too_deep);
    EXPECT_EQ(too_deep.error().code, ErrorCode::BadInput);
    EXPECT_NE(too_deep.error().message.find("nested deeper than 32 levels"), std::string::npos)
        << too_deep.error().message;
    EXPECT_FALSE(substitute_variables(nested_defaults(300'000), vars));

    // Outside URL keys the excess is kept literally, as any malformed reference is.
    test::TempDir dir;
    const auto file = dir.write(
        "f.repo", "[r]\nbaseurl=http://127.0.0.1/\nname=" + nested_defaults(300'000) + "\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, vars, warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    // 32 levels are substituted (`a` is undefined: each takes its word); the 33rd `${` on is text.
    EXPECT_EQ(repos->front().name, nested_defaults(300'000 - 32));
}

TEST(ConfigVariables, VariablesCanSpellBooleansAndNumbers) {
    test::TempDir dir;
    const auto file =
        dir.write("f.repo", "[r]\nbaseurl=http://127.0.0.1/\nenabled=$on\nretries=${n:-4}\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, vars_of({{"on", "0"}}), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_FALSE(repos->front().enabled);
    EXPECT_EQ(repos->front().retries, 4u);
}

TEST(ConfigVariables, AmazonLinuxWithVarsFromTheTree) {
    VariableOptions options = isolated_options();
    options.varsdirs = {test::config_data_dir() / "vars"};
    auto vars = make_variable_context(options);
    ASSERT_TRUE(vars) << vars.error().to_string();
    EXPECT_EQ(*vars->find("releasever"), "2023.6.20241010");
    EXPECT_EQ(*vars->find("releasever_major"), "2023");
    EXPECT_EQ(*vars->find("releasever_minor"), "6.20241010");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(test::config_data_dir() / "yum.repos.d" / "amazonlinux.repo", *vars,
                                warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    ASSERT_EQ(repos->size(), 2u);
    EXPECT_EQ(repos->front().mirrorlist,
              "https://al2023-repos-us-east-1-de612dc2.s3.dualstack.us-east-1.amazonaws.com/core/"
              "mirrors/2023.6.20241010/x86_64/mirror.list");
    EXPECT_EQ(test::count_warnings(warnings, ConfigWarningKind::IgnoredKey), 0u);
    EXPECT_EQ(repos->front().priority, 10);  // dnf prefers it to a repository of 99
}

}  // namespace
}  // namespace rpmirror

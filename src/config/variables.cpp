// dnf's configuration variables: where their values come from and how `$name` is substituted.
#include <sys/utsname.h>

#include <cerrno>
#include <optional>
#include <system_error>
#include <unordered_set>

#include <fmt/format.h>

#include "config/repo_files.hpp"
#include "config/variables_internal.hpp"
#include "rpmirror/config/config.hpp"
#include "s3/config.hpp"
#include "util/ini.hpp"

extern char** environ;  // NOLINT: POSIX

namespace rpmirror {
namespace {

// `${a:-${b:-...}}` deeper than this is refused (Fail) or kept literally (Keep): no real
// configuration nests more than two or three levels.
constexpr std::size_t kMaxNestingDepth = 32;
// Characters examined per character of text before substitution gives up (Keep: the text is
// kept as written). Without unterminated references each character is examined once.
constexpr std::size_t kStepsPerByte = 16;

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_valid_variable_name(std::string_view name) {
    if (name.empty()) {
        return false;
    }
    for (const char c : name) {
        if (!is_name_char(c)) {
            return false;
        }
    }
    return true;
}

// A recursive-descent substituter. `parse_sequence` reads text up to the end (top level) or to an
// unmatched '}' (inside the word of ${name:-word}); it appends to `out` only when evaluating, so
// the unused branch of `:-` / `:+` is parsed for its extent but may reference undefined names.
class Substituter {
  public:
    Substituter(std::string_view text, const VariableContext& vars, config::UndefinedPolicy policy)
        : text_(text), vars_(vars), policy_(policy) {}

    tl::expected<std::string, config::SubstitutionFailure> run() {
        std::string out;
        if (!parse_sequence(out, /*evaluate=*/true, /*in_word=*/false)) {
            if (policy_ == config::UndefinedPolicy::Keep && budget_exhausted_) {
                return std::string(text_);  // too tangled to substitute: kept as written
            }
            return tl::unexpected(std::move(*failure_));
        }
        return out;
    }

  private:
    bool fail(std::string variable, std::string detail) {
        failure_ = config::SubstitutionFailure{std::move(variable), std::move(detail)};
        return false;
    }

    std::string_view read_name() {
        const std::size_t start = pos_;
        while (pos_ < text_.size() && is_name_char(text_[pos_])) {
            ++pos_;
        }
        return text_.substr(start, pos_ - start);
    }

    bool parse_sequence(std::string& out, bool evaluate, bool in_word) {
        while (pos_ < text_.size()) {
            // Keep re-reads text after each unterminated `${` (as literal text); this bounds the
            // total, which a well-formed value (read once) never comes near.
            if (++steps_ > kStepsPerByte * (text_.size() + 1)) {
                budget_exhausted_ = true;
                return fail({}, "variable references too tangled to substitute");
            }
            const char c = text_[pos_];
            if (c == '}' && in_word) {
                return true;
            }
            if (c != '$' || pos_ + 1 >= text_.size()) {
                if (evaluate) {
                    out += c;
                }
                ++pos_;
                continue;
            }
            const char next = text_[pos_ + 1];
            if (is_name_char(next)) {
                if (!parse_plain_reference(out, evaluate)) {
                    return false;
                }
            } else if (next == '{') {
                if (!parse_braced_reference(out, evaluate)) {
                    return false;
                }
            } else {
                if (evaluate) {
                    out += c;
                }
                ++pos_;
            }
        }
        if (in_word) {
            return fail({}, "unterminated '${'");
        }
        return true;
    }

    // `$name`
    bool parse_plain_reference(std::string& out, bool evaluate) {
        const std::size_t start = pos_;
        ++pos_;
        const std::string_view name = read_name();
        if (!evaluate) {
            return true;
        }
        if (const std::string* value = vars_.find(name)) {
            out += *value;
            return true;
        }
        if (policy_ == config::UndefinedPolicy::Fail) {
            return fail(std::string(name), fmt::format("undefined variable '{}'", name));
        }
        out += text_.substr(start, pos_ - start);
        return true;
    }

    // `${name}`, `${name:-word}`, `${name:+word}`
    bool parse_braced_reference(std::string& out, bool evaluate) {
        const std::size_t start = pos_;
        // Keep: a `${` found unterminated once stays unterminated (its extent does not depend on
        // the context), so it is not parsed again. Without this, each of n nested unterminated
        // `${a:-` was re-parsed by every enclosing one: 2^n work, minutes for n = 22.
        if (policy_ == config::UndefinedPolicy::Keep && unterminated_starts_.contains(start)) {
            return keep_literal_dollar(out, start, evaluate);
        }
        if (depth_ >= kMaxNestingDepth) {
            // Recursion is bounded by the nesting, which the input controls.
            if (policy_ == config::UndefinedPolicy::Fail) {
                return fail({}, fmt::format("variable references nested deeper than {} levels",
                                            kMaxNestingDepth));
            }
            return keep_literal_dollar(out, start, evaluate);
        }
        pos_ += 2;
        const std::string_view name = read_name();
        const std::string* value = vars_.find(name);
        if (!name.empty() && pos_ < text_.size() && text_[pos_] == '}') {
            ++pos_;
            if (!evaluate) {
                return true;
            }
            if (value != nullptr) {
                out += *value;
                return true;
            }
            if (policy_ == config::UndefinedPolicy::Fail) {
                return fail(std::string(name), fmt::format("undefined variable '{}'", name));
            }
            out += text_.substr(start, pos_ - start);
            return true;
        }
        if (!name.empty() && pos_ + 1 < text_.size() && text_[pos_] == ':' &&
            (text_[pos_ + 1] == '-' || text_[pos_ + 1] == '+')) {
            const bool is_default = text_[pos_ + 1] == '-';
            pos_ += 2;
            const bool is_set = value != nullptr && !value->empty();
            const bool use_word = is_default ? !is_set : is_set;
            std::string word;
            ++depth_;
            const bool word_ok = parse_sequence(word, evaluate && use_word, /*in_word=*/true);
            --depth_;
            if (!word_ok) {
                if (policy_ == config::UndefinedPolicy::Keep && failure_->variable.empty() &&
                    !budget_exhausted_) {
                    unterminated_starts_.insert(start);
                    return keep_literal_dollar(out, start, evaluate);
                }
                return false;
            }
            ++pos_;  // the closing '}'
            if (evaluate) {
                out += use_word ? word : (is_default ? *value : std::string());
            }
            return true;
        }
        if (policy_ == config::UndefinedPolicy::Fail) {
            return fail(
                {}, fmt::format("malformed variable reference at '{}'", text_.substr(start, 40)));
        }
        return keep_literal_dollar(out, start, evaluate);
    }

    // Keep policy, malformed `${`: the '$' is literal and parsing resumes right after it.
    bool keep_literal_dollar(std::string& out, std::size_t start, bool evaluate) {
        failure_.reset();
        pos_ = start + 1;
        if (evaluate) {
            out += '$';
        }
        return true;
    }

    std::string_view text_;
    const VariableContext& vars_;
    config::UndefinedPolicy policy_;
    std::size_t pos_ = 0;
    std::size_t depth_ = 0;  // `${name:-` words currently open
    std::unordered_set<std::size_t> unterminated_starts_;
    std::size_t steps_ = 0;
    bool budget_exhausted_ = false;
    std::optional<config::SubstitutionFailure> failure_;
};

struct ArchMapping {
    std::string_view machine;
    std::string_view basearch;
};

// dnf's arch -> basearch map (dnf/rpm/__init__.py _BASEARCH_MAP), for machine names uname reports.
constexpr ArchMapping kBaseArchMap[] = {
    {"aarch64", "aarch64"},   {"alpha", "alpha"},        {"alphaev4", "alpha"},
    {"alphaev45", "alpha"},   {"alphaev5", "alpha"},     {"alphaev56", "alpha"},
    {"alphaev6", "alpha"},    {"alphaev67", "alpha"},    {"alphaev68", "alpha"},
    {"alphaev7", "alpha"},    {"alphapca56", "alpha"},   {"amd64", "x86_64"},
    {"armv5tejl", "arm"},     {"armv5tel", "arm"},       {"armv5tl", "arm"},
    {"armv6l", "arm"},        {"armv7l", "armhfp"},      {"armv7hl", "armhfp"},
    {"armv7hnl", "armhfp"},   {"armv8l", "armhfp"},      {"armv6hl", "armhfp"},
    {"athlon", "i386"},       {"geode", "i386"},         {"i386", "i386"},
    {"i486", "i386"},         {"i586", "i386"},          {"i686", "i386"},
    {"ia32e", "x86_64"},      {"ia64", "ia64"},          {"loongarch64", "loongarch64"},
    {"mips", "mips"},         {"mipsel", "mipsel"},      {"mips64", "mips64"},
    {"mips64el", "mips64el"}, {"noarch", "noarch"},      {"ppc", "ppc"},
    {"ppc64", "ppc64"},       {"ppc64iseries", "ppc64"}, {"ppc64le", "ppc64le"},
    {"ppc64p7", "ppc64"},     {"ppc64pseries", "ppc64"}, {"riscv64", "riscv64"},
    {"s390", "s390"},         {"s390x", "s390x"},        {"sh3", "sh3"},
    {"sh4", "sh4"},           {"sh4a", "sh4"},           {"sparc", "sparc"},
    {"sparc64", "sparc"},     {"sparc64v", "sparc"},     {"sparcv8", "sparc"},
    {"sparcv9", "sparc"},     {"sparcv9v", "sparc"},     {"x86_64", "x86_64"},
};

// Reads the first line of every regular file named like a variable in `directory` into `values`.
Result<void> read_vars_directory(const std::filesystem::path& directory,
                                 std::map<std::string, std::string, std::less<>>& values) {
    std::error_code error;
    if (!std::filesystem::is_directory(directory, error)) {
        return {};
    }
    std::filesystem::directory_iterator entries(directory, error);
    if (error) {
        return make_errno_error("cannot list vars directory", directory.string(), error.value());
    }
    for (const std::filesystem::directory_entry& entry : entries) {
        const std::string name = entry.path().filename().string();
        if (!is_valid_variable_name(name) || !entry.is_regular_file(error)) {
            continue;  // dnf skips such files too
        }
        auto content = ini::read_text_file(entry.path());
        if (!content) {
            return tl::unexpected(std::move(content.error()));
        }
        std::string_view value = *content;
        value = value.substr(0, value.find('\n'));
        if (!value.empty() && value.back() == '\r') {
            value.remove_suffix(1);
        }
        values[name] = std::string(value);
    }
    return {};
}

std::map<std::string, std::string> process_environment() {
    std::map<std::string, std::string> environment;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        const std::string_view text(*entry);
        const std::size_t equals = text.find('=');
        if (equals != std::string_view::npos) {
            environment.emplace(std::string(text.substr(0, equals)),
                                std::string(text.substr(equals + 1)));
        }
    }
    return environment;
}

}  // namespace

namespace config {

tl::expected<std::string, SubstitutionFailure> substitute(std::string_view text,
                                                          const VariableContext& vars,
                                                          UndefinedPolicy policy) {
    return Substituter(text, vars, policy).run();
}

}  // namespace config

const std::string* VariableContext::find(std::string_view name) const {
    const auto found = values.find(name);
    return found == values.end() ? nullptr : &found->second;
}

std::string base_arch_for(std::string_view machine) {
    for (const ArchMapping& mapping : kBaseArchMap) {
        if (mapping.machine == machine) {
            return std::string(mapping.basearch);
        }
    }
    return std::string(machine);
}

Result<VariableContext> make_variable_context(const VariableOptions& options) {
    VariableContext context;
    std::string machine;
    if (options.machine) {
        machine = *options.machine;
    } else {
        struct utsname names {};
        if (::uname(&names) != 0) {
            return make_errno_error("uname failed", "uname", errno);
        }
        machine = names.machine;
    }
    context.values["arch"] = machine;
    context.values["basearch"] = base_arch_for(machine);

    for (const std::filesystem::path& directory : options.varsdirs) {
        if (auto read = read_vars_directory(directory, context.values); !read) {
            return tl::unexpected(std::move(read.error()));
        }
    }

    const std::map<std::string, std::string> environment =
        options.environment ? *options.environment : process_environment();
    for (const auto& [key, value] : environment) {
        constexpr std::string_view kPrefix = "DNF_VAR_";
        if (key.size() == 4 && key.starts_with("DNF") && key[3] >= '0' && key[3] <= '9') {
            context.values[key] = value;
        } else if (key.starts_with(kPrefix) && is_valid_variable_name(key.substr(kPrefix.size()))) {
            context.values[key.substr(kPrefix.size())] = value;
        }
    }

    if (options.releasever) {
        context.values["releasever"] = *options.releasever;
    }
    if (options.basearch) {
        context.values["basearch"] = *options.basearch;
    }
    if (const std::string* releasever = context.find("releasever")) {
        const std::size_t dot = releasever->find('.');
        const std::string major = releasever->substr(0, dot);
        const std::string minor =
            dot == std::string::npos ? std::string() : releasever->substr(dot + 1);
        context.values["releasever_major"] = major;
        context.values["releasever_minor"] = minor;
    }
    return context;
}

Result<std::string> substitute_variables(std::string_view text, const VariableContext& vars) {
    auto substituted = config::substitute(text, vars, config::UndefinedPolicy::Fail);
    if (!substituted) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("{} in \"{}\"", substituted.error().detail, text));
    }
    return std::move(*substituted);
}

}  // namespace rpmirror

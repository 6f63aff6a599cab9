// rpmirror's command line: parses arguments and hands over to one subcommand.
#include <fmt/core.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"

namespace {

// The number of single-character insertions, deletions and substitutions between `a` and `b`.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The first argument that is no option, iff it names no subcommand of `app`: an unknown command,
// with the nearest name (within two edits) to suggest. Without this CLI11 says only that a
// subcommand is required.
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
    for (int index = 1; index < argc; ++index) {
        const std::string_view argument = argv[index];
        if (argument.starts_with("-")) {
            continue;
        }
        std::string nearest;
        std::size_t best = 3;
        for (const CLI::App* command : app.get_subcommands({})) {
            std::vector<std::string> names = command->get_aliases();
            names.push_back(command->get_name());
            for (const std::string& name : names) {
                if (name == argument) {
                    return std::nullopt;
                }
                if (const std::size_t distance = edit_distance(argument, name); distance < best) {
                    best = distance;
                    nearest = name;
                }
            }
        }
        return nearest.empty()
                   ? fmt::format("no such command: {} (rpmirror --help lists them)", argument)
                   : fmt::format("no such command: {}; did you mean '{}'?", argument, nearest);
    }
    return std::nullopt;
}

// CLI11's help with the option lines' "Needs: --x" and "Excludes: -6" left out: each option's
// description says it in words ("with --delete"), and the column is for its value's name.
class HelpFormatter final : public CLI::Formatter {
  public:
    std::string make_option_opts(const CLI::Option* option) const override {
        std::string text = CLI::Formatter::make_option_opts(option);
        for (const char* label : {" Needs:", " Excludes:"}) {
            if (const std::size_t at = text.find(label); at != std::string::npos) {
                text.erase(at);
            }
        }
        return text;
    }
};

}  // namespace

int main(int argc, char** argv) {
    using namespace rpmirror::cli;
    CLI::App app{"rpmirror: mirror RPM repositories, fast, and never leave a broken mirror"};
    app.set_version_flag("--version", std::string("rpmirror ") + RPMIRROR_VERSION);
    app.require_subcommand(1);
    app.formatter(std::make_shared<HelpFormatter>());  // (subcommands take it when added)

    const Command commands[] = {
        add_checksum_command(app), add_exec_command(app),   add_sync_command(app),
        add_verify_command(app),   add_diff_command(app),   add_snapshot_command(app),
        add_export_command(app),   add_import_command(app), add_serve_command(app)};

    app.name("rpmirror");  // in usage lines, not the path it was started by
    if (const auto unknown = unknown_command(app, argc, argv)) {
        fmt::print(stderr, "rpmirror: {}\n", *unknown);
        return kExitUsage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& help) {
        return app.exit(help);
    } catch (const CLI::CallForAllHelp& help) {
        return app.exit(help);
    } catch (const CLI::CallForVersion& version) {
        return app.exit(version);
    } catch (const CLI::ParseError& error) {
        app.exit(error);  // prints the message and the hint to use --help
        return kExitUsage;
    }

    try {
        for (const Command& command : commands) {
            if (command.app->parsed()) {
                return command.run();
            }
        }
    } catch (const std::exception& error) {
        fmt::print(stderr, "rpmirror: internal error: {}\n", error.what());
        return kExitFailure;
    }
    return kExitUsage;
}

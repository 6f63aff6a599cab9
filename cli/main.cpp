// rpmirror's command line: parses arguments and hands over to one subcommand.
#include <fmt/core.h>

#include <exception>

#include "command.hpp"

int main(int argc, char** argv) {
    using namespace rpmirror::cli;
    CLI::App app{"rpmirror: mirror RPM repositories, fast, and never leave a broken mirror"};
    app.set_version_flag("--version", std::string("rpmirror ") + RPMIRROR_VERSION);
    app.require_subcommand(1);

    const Command commands[] = {add_checksum_command(app), add_exec_command(app),
                                add_sync_command(app),     add_verify_command(app),
                                add_diff_command(app),     add_snapshot_command(app)};

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

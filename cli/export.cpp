// `rpmirror export` and `rpmirror import`: bundles for disconnected sites (a thin layer over
// rpmirror/export/export.hpp).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "repo_options.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/export/export.hpp"
#include "s3_options.hpp"

namespace rpmirror::cli {

namespace {

struct ExportArgs {
    std::string download_path;
    std::vector<std::string> repos;
    std::string config_file;
    std::vector<std::string> jobs;
    std::string output;
    std::string base;
    std::string chunk_size = "1G";
    std::string format = "importable";
    std::string sign_key;
    std::string snapshot_dir;
    std::string state_dir;
    S3Args s3;
    std::size_t keep_exports = 0;
    bool copy = false;
    bool quiet = false;
};

struct ImportArgs {
    std::string bundle;
    std::string download_path;
    std::string keyring;
    std::string state_dir;
    S3Args s3;
    bool quiet = false;
};

std::string megabytes(std::uint64_t bytes) {
    return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

int run_export(const ExportArgs& args) {
    ExportOptions options;
    const std::optional<std::uint64_t> chunk = parse_byte_size(args.chunk_size);
    if (!chunk || *chunk == 0) {
        fmt::print(stderr, "rpmirror: export: --chunk-size '{}': not a size above 0 (1G, 700M)\n",
                   args.chunk_size);
        return kExitUsage;
    }
    options.destination = args.download_path;
    options.repositories = args.repos;
    options.bundle = args.output;
    options.chunk_size = *chunk;
    if (!args.base.empty()) {
        options.base = args.base;
    }
    options.syncable = args.format == "syncable";
    options.snapshot_dir = args.snapshot_dir;
    options.copy = args.copy;
    options.keep_exports = args.keep_exports;
    options.sign_key = args.sign_key;
    options.state_dir = args.state_dir;
    options.s3 = s3_overrides(args.s3);
    if (!args.config_file.empty() || !args.jobs.empty()) {
        std::vector<std::string> warnings;
        auto chosen =
            choose_export_jobs({args.config_file, split_option_list(args.jobs)}, options, warnings);
        for (const std::string& warning : warnings) {
            fmt::print(stderr, "rpmirror: export: warning: {}\n", warning);
        }
        if (!chosen) {
            fmt::print(stderr, "rpmirror: export: {}\n", chosen.error().to_string());
            return kExitUsage;
        }
    } else if (options.destination.empty()) {
        fmt::print(stderr,
                   "rpmirror: export: -p/--download-path (or --config-file/--job) is required\n");
        return kExitUsage;
    }
    auto report = export_bundle(options);
    if (!report) {
        fmt::print(stderr, "rpmirror: export: {}\n", report.error().to_string());
        return kExitFailure;
    }
    if (!args.quiet) {
        for (const ExportedRepository& repository : report->repositories) {
            fmt::print("{}: {} of {} files carried ({}), {} gone\n", repository.id,
                       repository.carried, repository.files, megabytes(repository.carried_bytes),
                       repository.removed);
        }
    }
    fmt::print("{}: {} chunk(s), {}{}, {}; snapshot {} kept\n", report->bundle.string(),
               report->chunks, megabytes(report->bytes),
               report->signed_manifest ? ", manifest signed" : "",
               report->base.empty() ? std::string("complete") : "incremental on " + report->base,
               report->snapshot);
    for (const std::string& pruned : report->pruned) {
        fmt::print("{}: removed older export snapshot\n", pruned);
    }
    for (const std::string& warning : report->warnings) {
        fmt::print(stderr, "rpmirror: export: warning: {}\n", warning);
    }
    return kExitOk;
}

int run_import(const ImportArgs& args) {
    ImportOptions options;
    options.bundle = args.bundle;
    options.destination = args.download_path;
    if (!args.keyring.empty()) {
        options.keyring = args.keyring;
    }
    options.state_dir = args.state_dir;
    options.s3 = s3_overrides(args.s3);
    auto report = import_bundle(options);
    if (!report) {
        fmt::print(stderr, "rpmirror: import: {}\n", report.error().to_string());
        return kExitFailure;
    }
    for (const std::string& warning : report->warnings) {
        fmt::print(stderr, "rpmirror: import: warning: {}\n", warning);
    }
    if (!args.quiet) {
        fmt::print("{}: {} chunk(s) checked, {} checked by an earlier run\n", report->name,
                   report->chunks_checked, report->chunks_resumed);
        for (const ImportedRepository& repository : report->repositories) {
            if (repository.already) {
                fmt::print("{}: already at bundle {}\n", repository.id, report->name);
            } else {
                fmt::print("{}: {} files placed ({}), {} removed\n", repository.id,
                           repository.placed, megabytes(repository.placed_bytes),
                           repository.removed);
            }
        }
    }
    for (const ImportedRepository& repository : report->repositories) {
        if (!repository.snapshot.empty()) {
            fmt::print("{}: snapshot {}\n", repository.id, repository.snapshot);
        }
    }
    return report->warnings.empty() ? kExitOk : kExitPartial;
}

}  // namespace

Command add_export_command(CLI::App& parent) {
    auto args = std::make_shared<ExportArgs>();
    CLI::App* app = parent.add_subcommand(
        "export",
        "Write mirrored repositories into a bundle for a disconnected site: checksummed chunks\n"
        "and a manifest, complete or only what changed since --base (rpmirror import reads it)");
    app->add_option("-p,--download-path", args->download_path,
                    "the mirror's root: a directory or s3://BUCKET/PREFIX (with --config-file: "
                    "the jobs' root, by default)");
    app->add_option("--repo,--repoid", args->repos,
                    "export this repository (repeatable; default: every repository there)");
    app->add_option("--config-file", args->config_file,
                    "export the repositories of this configuration's jobs (rpmirror.conf; "
                    "default /etc/rpmirror/rpmirror.conf with --job)");
    app->add_option("--job", args->jobs,
                    "only the jobs matching this glob (repeatable, comma lists; default: every "
                    "enabled job)");
    app->add_option("-o,--output", args->output, "the bundle directory to create (must not exist)")
        ->required();
    app->add_option("--base", args->base,
                    "only what changed since this snapshot (the far side holds it), this bundle "
                    "directory or this bundle's name (the far side imported it); auto: since the "
                    "last bundle exported here (complete if none)");
    app->add_option("--chunk-size", args->chunk_size,
                    "the largest chunk file (1G, 700M, 4G; default 1G)");
    app->add_option("--format", args->format,
                    "importable (chunks) or syncable (also plain repository trees under repos/ "
                    "that dnf reads through file://; complete only)")
        ->check(CLI::IsMember({"importable", "syncable"}));
    app->add_option("--sign-key", args->sign_key,
                    "sign the manifest with this gpg key (manifest.json.asc)");
    app->add_option("--snapshot-dir", args->snapshot_dir,
                    "where snapshots/ is for --base SNAPSHOT (default: the download path)");
    app->add_option("--state-dir", args->state_dir,
                    "rpmirror's state directory (default: $RPMIRROR_STATE_DIR, ~/.local/state)");
    app->add_flag("--copy", args->copy,
                  "copy packages into the export snapshot instead of hard-linking them (a "
                  "--snapshot-dir on another filesystem)");
    app->add_option("--keep-exports", args->keep_exports,
                    "then keep only the newest N export snapshots of each repository (the one "
                    "this bundle names, and every published one, always kept; default: all)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
    add_s3_options(*app, args->s3, false);
    app->add_flag("-q,--quiet", args->quiet, "print only the bundle's summary and errors");
    return Command{app, [args]() { return run_export(*args); }};
}

Command add_import_command(CLI::App& parent) {
    auto args = std::make_shared<ImportArgs>();
    CLI::App* app = parent.add_subcommand(
        "import",
        "Place a bundle made by rpmirror export into a mirror: every chunk checked first, the\n"
        "metadata published last, the result kept as a snapshot named after the bundle");
    app->add_option("bundle", args->bundle, "the bundle directory (read only)")->required();
    app->add_option("-p,--download-path", args->download_path,
                    "the mirror's root: a directory or s3://BUCKET/PREFIX")
        ->required();
    app->add_option("--keyring", args->keyring,
                    "require the manifest signed by a key of this armored public key file");
    app->add_option("--state-dir", args->state_dir,
                    "rpmirror's state directory (default: $RPMIRROR_STATE_DIR, ~/.local/state)");
    add_s3_options(*app, args->s3, false);
    app->add_flag("-q,--quiet", args->quiet, "print only the snapshots taken and errors");
    return Command{app, [args]() { return run_import(*args); }};
}

}  // namespace rpmirror::cli

// The files for running rpmirror unattended (dist/): systemd's own checker accepts the units,
// the hardening and timer keys are there, systemd-sysusers creates the user from the sysusers.d
// file (in a scratch root), the example rpmirror.conf is all comments and, uncommented, parses
// into the documented jobs, and `cmake --install` puts everything where the design says.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "integration/sync/sync_harness.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"
#include "util/ini.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// key -> every value given to it (in order), of one section of a unit file.
using UnitSection = std::map<std::string, std::vector<std::string>>;

std::map<std::string, UnitSection> parse_unit(const fs::path& file) {
    std::map<std::string, UnitSection> sections;
    std::string section;
    for (const std::string& line : lines_of(read_file(file))) {
        if (line.empty() || line.front() == '#' || line.front() == ';') {
            continue;
        }
        if (line.front() == '[') {
            section = line.substr(1, line.find(']') - 1);
            continue;
        }
        const std::size_t equals = line.find('=');
        sections[section][line.substr(0, equals)].push_back(line.substr(equals + 1));
    }
    return sections;
}

// The single value of `key`, or "" when it is missing or given several times.
std::string value_of(const UnitSection& section, const std::string& key) {
    const auto found = section.find(key);
    return found == section.end() || found->second.size() != 1 ? "" : found->second.front();
}

class DistFiles : public ::testing::Test {
  protected:
    fs::path dist_ = source_root() / "dist";
    TempDir tmp_;
};

TEST_F(DistFiles, SystemdAnalyzeVerifyAcceptsBothUnitsWithoutAWarning) {
    // Copied with ExecStart pointing at the binary under test (verify checks it is executable);
    // User=rpmirror need not exist: verify does not resolve users. --man=no: the man pages are
    // installed, not on this machine.
    const fs::path units = tmp_ / "units";
    fs::create_directories(units);
    std::string service = read_file(dist_ / "systemd" / "rpmirror-sync.service");
    const std::string installed = "ExecStart=/usr/bin/rpmirror ";
    ASSERT_NE(service.find(installed), std::string::npos);
    service.replace(service.find(installed), installed.size(),
                    "ExecStart=" + rpmirror_binary() + " ");
    TempDir::write_at(units / "rpmirror-sync.service", service);
    fs::copy_file(dist_ / "systemd" / "rpmirror-sync.timer", units / "rpmirror-sync.timer");
    std::string server = read_file(dist_ / "systemd" / "rpmirror-serve.service");
    ASSERT_NE(server.find(installed), std::string::npos);
    server.replace(server.find(installed), installed.size(),
                   "ExecStart=" + rpmirror_binary() + " ");
    TempDir::write_at(units / "rpmirror-serve.service", server);
    fs::copy_file(dist_ / "systemd" / "rpmirror-serve.socket", units / "rpmirror-serve.socket");

    const CommandResult verified = run_to_end(
        {"systemd-analyze", "verify", "--man=no", (units / "rpmirror-sync.service").string(),
         (units / "rpmirror-sync.timer").string(), (units / "rpmirror-serve.service").string(),
         (units / "rpmirror-serve.socket").string()},
        tmp_ / "logs");

    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    // An unknown or misspelt key is only a warning to systemd: none at all.
    EXPECT_EQ(verified.err, "");
    EXPECT_EQ(verified.out, "");
}

TEST_F(DistFiles, ServiceIsAHardenedOneshotAsTheRpmirrorUser) {
    const auto unit = parse_unit(dist_ / "systemd" / "rpmirror-sync.service");
    const UnitSection& service = unit.at("Service");
    // No --metrics-file: it would override `metrics-file =` in [main]; the default file comes
    // from the environment, which [main] overrides (JobModeTest.MetricsFile...).
    EXPECT_EQ(value_of(service, "ExecStart"),
              "/usr/bin/rpmirror sync --config-file /etc/rpmirror/rpmirror.conf");
    EXPECT_EQ(service.at("Environment"),
              (std::vector<std::string>{"RPMIRROR_STATE_DIR=/var/lib/rpmirror",
                                        "RPMIRROR_METRICS_FILE=/var/lib/rpmirror/rpmirror.prom"}));
    const std::map<std::string, std::string> expected{
        {"Type", "oneshot"},
        {"User", "rpmirror"},
        {"Group", "rpmirror"},
        {"StateDirectory", "rpmirror"},
        {"ProtectSystem", "strict"},
        {"ReadWritePaths", "/srv/mirror"},
        {"ProtectHome", "yes"},
        {"PrivateTmp", "yes"},
        {"PrivateDevices", "yes"},
        {"NoNewPrivileges", "yes"},
        {"CapabilityBoundingSet", ""},
        {"ProtectKernelTunables", "yes"},
        {"ProtectKernelModules", "yes"},
        {"ProtectKernelLogs", "yes"},
        {"ProtectControlGroups", "yes"},
        {"ProtectClock", "yes"},
        {"ProtectHostname", "yes"},
        {"RestrictNamespaces", "yes"},
        {"RestrictRealtime", "yes"},
        {"RestrictSUIDSGID", "yes"},
        {"LockPersonality", "yes"},
        {"MemoryDenyWriteExecute", "yes"},
        {"SystemCallArchitectures", "native"},
        {"RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6 AF_NETLINK"},
    };
    for (const auto& [key, value] : expected) {
        ASSERT_EQ(service.count(key), 1U) << key;
        EXPECT_EQ(service.at(key), std::vector<std::string>{value}) << key;
    }
    EXPECT_EQ(service.at("SystemCallFilter"),
              (std::vector<std::string>{"@system-service", "~@privileged"}));
    const UnitSection& unit_section = unit.at("Unit");
    EXPECT_EQ(value_of(unit_section, "Wants"), "network-online.target");
    EXPECT_EQ(value_of(unit_section, "After"), "network-online.target");
}

TEST_F(DistFiles, TimerRunsDailyWithARandomDelayAndCatchesUpMissedRuns) {
    const auto unit = parse_unit(dist_ / "systemd" / "rpmirror-sync.timer");
    const UnitSection& timer = unit.at("Timer");
    EXPECT_EQ(value_of(timer, "OnCalendar"), "daily");
    EXPECT_EQ(value_of(timer, "RandomizedDelaySec"), "1h");
    EXPECT_EQ(value_of(timer, "Persistent"), "true");
    EXPECT_EQ(value_of(unit.at("Install"), "WantedBy"), "timers.target");
}

TEST_F(DistFiles, SysusersCreatesTheRpmirrorSystemUserInAScratchRoot) {
    fs::create_directories(tmp_ / "root" / "etc");
    const CommandResult created =
        run_to_end({"systemd-sysusers", "--root=" + (tmp_ / "root").string(),
                    (dist_ / "sysusers.d" / "rpmirror.conf").string()},
                   tmp_ / "logs");
    ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
    const std::vector<std::string> passwd = lines_of(read_file(tmp_ / "root" / "etc" / "passwd"));
    ASSERT_EQ(passwd.size(), 1U);
    // name:x:uid:gid:gecos:home:shell, a system uid (below 1000), no login shell.
    const std::string& entry = passwd.front();
    EXPECT_TRUE(entry.starts_with("rpmirror:x:")) << entry;
    EXPECT_TRUE(entry.ends_with(":rpmirror repository mirror:/var/lib/rpmirror:/usr/sbin/nologin"))
        << entry;
    EXPECT_LT(std::stoi(entry.substr(11)), 1000) << entry;
    EXPECT_TRUE(read_file(tmp_ / "root" / "etc" / "group").starts_with("rpmirror:x:"));
}

TEST_F(DistFiles, ExampleConfigIsAllCommentsAndUncommentedHoldsThreeJobs) {
    const std::string text = read_file(dist_ / "rpmirror.conf");
    std::string uncommented;
    for (const std::string& line : lines_of(text)) {
        ASSERT_TRUE(line.empty() || line.front() == '#') << line;
        // "#key = value" and "#[section]" are the settings; "##" and "# " lines are prose.
        if (line.size() > 1 && line[1] != '#' && line[1] != ' ') {
            uncommented += line.substr(1) + "\n";
        }
    }
    const auto sections = ini::parse_ini(uncommented, "rpmirror.conf (uncommented)");
    ASSERT_TRUE(sections) << sections.error().to_string();
    std::vector<std::string> names;
    for (const ini::IniSection& section : *sections) {
        names.push_back(section.name);
        if (section.name == "main") {
            continue;
        }
        std::set<std::string> sources;
        for (const ini::IniEntry& entry : section.entries) {
            if (entry.key == "repo" || entry.key == "baseurl" || entry.key == "mirrorlist" ||
                entry.key == "metalink") {
                sources.insert(entry.key);
            }
        }
        EXPECT_EQ(sources.size(), 1U) << section.name << ": one source per job";
    }
    EXPECT_EQ(names, (std::vector<std::string>{"main", "rocky9-baseos", "epel9", "vendor-tools"}));
}

TEST_F(DistFiles, InstallPutsUnitsUserAndExampleConfigWhereTheDesignSaysAndKeepsAConfig) {
    // The build tree of the binary under test, installed with prefix /usr into a scratch root.
    const fs::path build_dir = fs::path(rpmirror_binary()).parent_path();
    const fs::path root = tmp_ / "root";
    const auto install = [&](const std::string& prefix = "/usr") {
        return run_to_end({"env", "DESTDIR=" + root.string(), "cmake", "--install",
                           build_dir.string(), "--prefix", prefix},
                          tmp_ / "logs");
    };
    const CommandResult installed = install();
    ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err;

    const fs::path service = root / "usr/lib/systemd/system/rpmirror-sync.service";
    ASSERT_TRUE(fs::exists(service));
    EXPECT_EQ(value_of(parse_unit(service).at("Service"), "ExecStart").find("/usr/bin/rpmirror "),
              0U);
    EXPECT_EQ(read_file(root / "usr/lib/systemd/system/rpmirror-sync.timer"),
              read_file(dist_ / "systemd" / "rpmirror-sync.timer"));
    EXPECT_EQ(read_file(root / "usr/lib/systemd/system/rpmirror-serve.socket"),
              read_file(dist_ / "systemd" / "rpmirror-serve.socket"));
    EXPECT_EQ(read_file(root / "usr/lib/sysusers.d/rpmirror.conf"),
              read_file(dist_ / "sysusers.d" / "rpmirror.conf"));
    EXPECT_EQ(read_file(root / "etc/rpmirror/rpmirror.conf"), read_file(dist_ / "rpmirror.conf"));

    // An admin's configuration is never replaced by the example.
    TempDir::write_at(root / "etc/rpmirror/rpmirror.conf", "[mine]\nbaseurl=http://x/\n");
    const CommandResult again = install();
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(read_file(root / "etc/rpmirror/rpmirror.conf"), "[mine]\nbaseurl=http://x/\n");

    // Another prefix: the service starts that prefix's binary; the example goes to its etc/.
    const CommandResult local = install("/usr/local");
    ASSERT_EQ(local.exit_code, 0) << local.out << local.err;
    EXPECT_EQ(
        value_of(
            parse_unit(root / "usr/local/lib/systemd/system/rpmirror-sync.service").at("Service"),
            "ExecStart")
            .find("/usr/local/bin/rpmirror sync "),
        0U);
    EXPECT_TRUE(fs::exists(root / "usr/local/etc/rpmirror/rpmirror.conf"));
}

}  // namespace
}  // namespace rpmirror::test

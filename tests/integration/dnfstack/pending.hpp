// THE list of rpmirror-side parity checks that fail on this branch (issue 11: the features they
// check are built in parallel on other branches), and of the scenarios dnf 4.14 itself fails on
// this machine. A listed check is skipped with its reason ("pending: ..."); the lead removes the
// entries once the features are merged. Keys: "DnfStack.<scenario>" for the ported ci-dnf-stack
// scenarios (tests/integration/dnfstack), "Compat.<case>" for SyncDnfCompat
// (tests/integration/sync/test_sync_dnf.cpp).
#pragma once

#include <map>
#include <string>

namespace rpmirror::test {

// Returns why `rpmirror reposync` does not pass the check `key` yet, or nullptr iff it should.
inline const char* pending_feature(const std::string& key) {
    static const std::map<std::string, const char*> pending{
        {"Compat.SourceEnablesSourceRepos", "--source enables the <id>-source repositories"},
        {"Compat.Downloadcomps", "-m/--downloadcomps"},
        {"Compat.DownloadcompsMetadataPath", "-m/--downloadcomps"},
        {"Compat.Enablerepo", "--enablerepo"},
        {"Compat.Disablerepo", "--disablerepo"},
        {"Compat.DisableAllEnableOne", "--disablerepo/--enablerepo"},
        {"Compat.ExcludeGlob", "-x/--exclude"},
        {"Compat.Excludepkgs", "--excludepkgs"},
        {"Compat.RemoteTime", "--remote-time"},
        {"Compat.ModularNewestOnly",
         "modular -n (modules.yaml: newest of every stream and context)"},
        {"Compat.ModularMulticontextNewestOnly",
         "modular -n; -u prints raw hrefs ('+', not '%2B')"},
        {"Compat.SkipIfUnavailableDeadRepository",
         "skip_if_unavailable=1: a dead repository is a warning, exit 0"},
        {"Compat.NorepopathSeveralRepositories",
         "--norepopath with several repositories: exit 1 as dnf"},
        {"Compat.MetadataPath", "-u with --download-metadata prints the metadata URLs"},
        {"Compat.DownloadMetadata", "-u with --download-metadata prints the metadata URLs"},
        {"DnfStack.BaseFunctionality",
         "dnf-style per-package output of `rpmirror reposync` (\"(n/N): name.rpm ...\")"},
        {"DnfStack.NewestOnly",
         "dnf-style per-package output of `rpmirror reposync` (\"(n/N): name.rpm ...\")"},
        {"DnfStack.Downloadcomps", "-m/--downloadcomps"},
        {"DnfStack.DownloadcompsWithoutComps", "-m/--downloadcomps"},
        {"DnfStack.DownloadcompsUncompressedInRepodata", "-m/--downloadcomps"},
        {"DnfStack.DownloadcompsWithMetadataPath", "-m/--downloadcomps"},
        {"DnfStack.ModularAllStreamsEvenIfModuleDisabled", "--installroot"},
        {"DnfStack.RespectsExcludes", "--excludepkgs / -x"},
        {"DnfStack.RespectsIncludes",
         "dnf-style per-package output of `rpmirror reposync` (\"(n/N): name.rpm ...\")"},
        {"DnfStack.RespectsExcludesButNotModularExcludes",
         "dnf-style per-package output of `rpmirror reposync` (\"(n/N): name.rpm ...\")"},
        {"DnfStack.DeleteRemovesPackagesNoLongerInTheRepository",
         "--refresh (accepted with dnf's meaning)"},
        {"DnfStack.RemoteTimeOfPackages", "--remote-time"},
        {"DnfStack.RemoteTimeOfMetadata", "--remote-time"},
        {"DnfStack.UrlsWithDownloadMetadata",
         "-u with --download-metadata prints the metadata URLs"},
        {"DnfStack.NewestOnlyModularMulticontext",
         "modular -n (modules.yaml: newest of every stream and context)"},
        {"DnfStack.NewestOnlyModularNotInLatestContext",
         "modular -n (modules.yaml: newest of every stream and context)"},
        {"DnfStack.NorepopathWithOneRepository",
         "dnf-style per-package output of `rpmirror reposync` (\"(n/N): name.rpm ...\")"},
        {"DnfStack.NorepopathWithSeveralRepositoriesFails",
         "--norepopath with several repositories: dnf's exit code 1 and message; localpkg_gpgcheck "
         "accepted silently"},
        {"DnfStack.NorepopathMetadataPathDownloadMetadata",
         "--norepopath with --metadata-path puts repodata/ directly under the metadata path"},
        {"DnfStack.NorepopathMetadataPathDownloadcomps", "-m/--downloadcomps"},
        {"DnfStack.DoesNotStopOnTheFirstError", "dnf-style [FAILED] line on stdout"},
        {"DnfStack.DuplicatedNevraIsDownloadedOnce",
         "dnf-style per-package output of `rpmirror reposync` (\"(n/N): name.rpm ...\")"},
        {"DnfStack.MinBuildtime", "--min-buildtime with an unpadded date (2008-1-1)"},
        {"DnfStack.RemovesUnsignedAndNotInstalledKeyPackages",
         "--installroot; --gpgcheck against the rpmdb, dnf's messages"},
        {"DnfStack.RemovesUnsignedPackages",
         "--installroot; --gpgcheck against the rpmdb, dnf's messages"},
        {"DnfStack.BaseFunctionalityOnLocalRepository",
         "dnf-style per-package output of `rpmirror reposync` (\"(n/N): name.rpm ...\")"},
        {"DnfStack.DifferentChecksumTypeDoesNotCauseRedownload",
         "librepo's user.Librepo.checksum.* xattrs and the [SKIPPED] line"},
        {"DnfStack.RemoteTimeStoresTheFilesMtimeInTheXattr",
         "--remote-time and librepo's checksum.mtime xattr"},
    };
    const auto found = pending.find(key);
    return found == pending.end() ? nullptr : found->second;
}

// Returns why dnf 4.14 fails the check `key` on this machine, or nullptr iff it passes.
inline const char* dnf_fails_here(const std::string& key) {
    static const std::map<std::string, const char*> failing{
        {"DnfStack.NorepopathMetadataPathDownloadMetadata",
         "dnf-plugins-core 4.3.1 ignores --norepopath for --metadata-path (RHEL-40914, fixed "
         "upstream later): repodata/ lands in <metadata-path>/<repoid>/"},
        {"DnfStack.NorepopathMetadataPathDownloadcomps",
         "dnf-plugins-core 4.3.1 ignores --norepopath for --metadata-path (RHEL-40914): comps.xml "
         "lands in <metadata-path>/<repoid>/"},
        {"DnfStack.DuplicatedNevraIsDownloadedOnce",
         "dnf-plugins-core 4.3.1 downloads a duplicated NEVRA twice (RHEL-64320, fixed upstream "
         "later)"},
        {"DnfStack.MinBuildtime",
         "dnf-plugins-core 4.3.1 has no --min-buildtime (RHEL-119475 added it later): exit 2"},
    };
    const auto found = failing.find(key);
    return found == failing.end() ? nullptr : found->second;
}

}  // namespace rpmirror::test

// The Engine's attempts: a file's .part opened on its first one, the mirror and URL of the next
// one, the budget's token taken, and the curl easy handle configured and added to the multi handle
// (or a file:// mirror copied).
#include "download/engine.hpp"

#include <curl/curl.h>

#include <cassert>
#include <cerrno>

#include "checksum/hasher.hpp"
#include "metadata/metadata.hpp"

namespace rpmirror::download {

namespace {

bool h2c_reuse_works() {
    static const bool works = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000;
    return works;
}

}  // namespace

CurlEasy Engine::take_easy() {
    if (!idle_easies.empty()) {
        CurlEasy easy = std::move(idle_easies.back());
        idle_easies.pop_back();
        curl_easy_reset(easy.get());
        return easy;
    }
    return CurlEasy(curl_easy_init());
}

void Engine::configure(Transfer& transfer) {
    Attempt& attempt = transfer.attempt;
    CURL* easy = attempt.easy.get();
    const DownloadOptions& o = options;
    curl_easy_setopt(easy, CURLOPT_URL, attempt.url.c_str());
    curl_easy_setopt(easy, CURLOPT_PRIVATE, &transfer);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, attempt.error_buffer.data());
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Engine::on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Engine::on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, static_cast<long>(kBlockSize));
    apply_connection_options(easy, o, attempt.url, user_agent, headers.get(), attempt.redirects);
    // A range is stored as sent: its bytes are not a stream that could be decoded alone.
    attempt.decoding = !transfer.store_as_sent && transfer.owner == nullptr;
    if (!attempt.decoding) {
        receive_body_as_sent(easy);
    }
    if (o.preserve_remote_time) {
        curl_easy_setopt(easy, CURLOPT_FILETIME, 1L);
    }
    const bool prior_knowledge = o.http2_prior_knowledge && iequals_prefix(attempt.url, "http://");
    // Waiting for a connection to multiplex on (PIPEWAIT) pays only where HTTP/2 may answer: h2c
    // with prior knowledge, and https, where the first connection's ALPN tells at once whether
    // it multiplexes (libcurl then starts the waiting transfers). Cleartext http without prior
    // knowledge is HTTP/1.1, learnt only from a response, and libcurl held every other transfer
    // back until the first one ended (a re-sync fetched its first package alone).
    const bool pipewait = prior_knowledge || iequals_prefix(attempt.url, "https://");
    curl_easy_setopt(easy, CURLOPT_PIPEWAIT, pipewait ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
                     prior_knowledge ? static_cast<long>(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
                                     : static_cast<long>(CURL_HTTP_VERSION_2TLS));
    if (prior_knowledge && !h2c_reuse_works()) {
        // libcurl < 8.0 breaks a reused h2c connection ("Error in the HTTP2 framing layer",
        // curl#10634): one connection per transfer there.
        curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 0L);
    }
    if (transfer.owner != nullptr) {
        const std::string range =
            std::to_string(attempt.range_start) + "-" + std::to_string(transfer.range_end - 1);
        curl_easy_setopt(easy, CURLOPT_RANGE, range.c_str());  // copied by libcurl
    } else if (attempt.range_start > 0) {
        const std::string range = std::to_string(attempt.range_start) + "-";
        curl_easy_setopt(easy, CURLOPT_RANGE, range.c_str());  // copied by libcurl
    }
}

bool Engine::prepare(Transfer& transfer) {
    const DownloadRequest& request = *transfer.request;
    auto part = roots[request.root_index].open_part(request.destination);
    if (!part) {
        finish_failed(transfer, part.error());
        return false;
    }
    transfer.dir_fd = part->dir_fd;
    transfer.part_name = part->part_name;
    transfer.sink = std::make_unique<PartSink>(transfer.index, pool,
                                               static_cast<unsigned>(transfer.index), completions);
    PublishSpec spec{part->dir_fd,         part->part_name,       part->final_name,
                     transfer.shown_path,  request.checksum_type, transfer.expected_digest,
                     request.expected_size};
    const std::uint64_t existing = part->existing_size;
    transfer.sink->attach(std::move(part->fd), std::move(spec));
    if (request.expected_size == kUnknownSize) {
        // Without a size, a leftover cannot be told complete from partial: start over.
        if (existing > 0) {
            transfer.sink->restart();
        }
        return true;
    }
    if (existing == request.expected_size) {
        // A complete leftover (or an empty file is expected): verify it, fetch nothing.
        transfer.sink->hash_prefix(existing);
        transfer.accepted = existing;
        begin_verification(transfer, Verification::LeftoverPart);
        transfer.sink->finish();
        return false;
    }
    if (existing > 0 && existing < request.expected_size) {
        transfer.sink->hash_prefix(existing);
        transfer.accepted = existing;
    } else if (existing > request.expected_size) {
        transfer.sink->restart();
    }
    return true;
}

std::string Engine::next_attempt_base(const Transfer& transfer) {
    if (is_absolute_url(transfer.request->href)) {
        return {};
    }
    return transfer.next_base ? *transfer.next_base : transfer.request->mirrors->order().front();
}

std::string Engine::attempt_url(const Transfer& transfer, const std::string& base) {
    return base.empty() ? transfer.request->href : join_url(base, transfer.request->href);
}

bool Engine::try_start(Transfer& transfer) {
    ConnectionBudget::Token token;
    if (budget_client) {
        const std::string url = attempt_url(transfer, next_attempt_base(transfer));
        if (is_http_url(url)) {
            token = budget_client.try_acquire(url);
            if (!token) {
                budget_refused = true;
                return false;
            }
        }
    }
    start(transfer, std::move(token));
    return true;
}

void Engine::start(Transfer& transfer, ConnectionBudget::Token token) {
    if (transfer.owner == nullptr) {
        if (!transfer.sink && !prepare(transfer)) {
            return;
        }
        if (const auto bases = segment_mirrors(transfer); !bases.empty()) {
            begin_segments(transfer, bases);
            return;
        }
    }
    assert(!transfer.attempt.easy);
    transfer.attempt = Attempt{};
    Attempt& attempt = transfer.attempt;
    attempt.base = next_attempt_base(transfer);
    attempt.url = attempt_url(transfer, attempt.base);
    transfer.next_base.reset();
    ++transfer.attempts;
    attempt.range_start = transfer.range_begin + transfer.accepted;
    if (progress != nullptr) {
        progress->file_started(file_of(transfer).index, attempt.url);
    }
    if (attempt.base.empty() && !is_http_url(attempt.url)) {
        // An absolute href comes from upstream (xml:base): never a local file.
        fail_attempt(transfer,
                     "refused: an absolute href must be an http or https URL (file:// is "
                     "only accepted as a mirror)",
                     FailureKind::Permanent);
        return;
    }
    if (auto path = file_url_path(attempt.url)) {
        attempt.range_start = 0;
        transfer.accepted = 0;
        begin_verification(transfer, Verification::FileCopy);
        transfer.sink->copy_from(std::move(*path));
        return;
    }
    if (!iequals_prefix(attempt.url, "http://") && !iequals_prefix(attempt.url, "https://")) {
        fail_attempt(transfer, "unsupported URL scheme", FailureKind::Permanent);
        return;
    }
    attempt.easy = take_easy();
    if (!attempt.easy) {
        finish_failed(transfer, Error{ErrorCode::Io, "cannot create a curl handle",
                                      transfer.shown_path, ENOMEM});
        return;
    }
    configure(transfer);
    attempt.connection = std::move(token);
    set_state(transfer, TransferState::Running);
    curl_multi_add_handle(multi, attempt.easy.get());
}

void Engine::detach(Transfer& transfer) {
    Attempt& attempt = transfer.attempt;
    if (!attempt.easy) {
        return;
    }
    curl_multi_remove_handle(multi, attempt.easy.get());
    idle_easies.push_back(std::move(attempt.easy));
    if (attempt.paused) {
        paused.erase(std::remove(paused.begin(), paused.end(), transfer.index), paused.end());
        attempt.paused = false;
    }
}

}  // namespace rpmirror::download

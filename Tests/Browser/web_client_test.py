"""The web client in headless Chromium against a real `cafe serve` with the demo data.

One story, in order, as people would use it: sign up (with an address, verified by the mailed link), search, open a cafe, review it with
three stars and a photo, watch the rating update, edit, meet someone else's comment and report
it, see the photo on the wall, check that HTML stays text, delete, be refused the operator
console, log out. Then the demo admin, with the password `cafe serve` printed, runs the console:
creates a cafe with a photo, edits, archives and restores it, hides the reported comment and
watches the aggregates drop and come back, blocks a user and deletes the account, asks for a reconcile, reads the audit log
and the mail screen. Then, in English and in Japanese, someone forgets their password, asks for a
link, reads the mail the real SMTP server (aiosmtpd) received, resets it, logs in, and deletes the account.
"""
import argparse
import email
import email.policy
import glob
import json
import os
import struct
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
import zlib

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT = 15


def png(width=320, height=200):
    """A real PNG (a warm gradient) that the browser can decode and show."""
    rows = b"".join(
        b"\x00" + b"".join(struct.pack("BBB", 120 + x * 120 // width, 70 + y * 90 // height, 40) for x in range(width))
        for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class Story:
    def __init__(self, base, screenshots, admin_file, mail_dir):
        self.base = base
        self.mail_dir = mail_dir
        with open(admin_file) as f:
            self.admin_password = dict(line.split(": ", 1) for line in f.read().splitlines() if ": " in line)["password"]
        self.screenshots = screenshots
        os.makedirs(screenshots, exist_ok=True)
        self.driver = self.browser()
        self.username = "web_" + uuid.uuid4().hex[:8]

    @staticmethod
    def browser():
        """A headless Chromium of its own (its own cookies and storage: another reader)."""
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,1000", "--lang=ja",
                    "--disable-gpu", "--hide-scrollbars"]:
            options.add_argument(arg)
        options.add_experimental_option("prefs", {"intl.accept_languages": "ja"})
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

    # -- helpers -----------------------------------------------------------------------------

    def wait(self, condition, what):
        try:
            # Lists re-render after every write: an element read mid-render is simply looked up again.
            return WebDriverWait(self.driver, WAIT, ignored_exceptions=(StaleElementReferenceException, NoAlertPresentException)).until(
                lambda d: condition(d))
        except TimeoutException:
            self.driver.save_screenshot(os.path.join(self.screenshots, "failure.png"))
            raise AssertionError(f"timed out waiting for: {what} (screenshot: failure.png)")

    def css(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def one(self, selector):
        return self.wait(lambda d: (d.find_elements(By.CSS_SELECTOR, selector) or [None])[0], selector)

    def go(self, hash_):
        self.driver.get(f"{self.base}/{hash_}")

    def api(self, method, path, body=None, token=None):
        request = urllib.request.Request(self.base + path, method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})})
        def decoded(body, headers):
            return json.loads(body or b"null") if "json" in headers.get("Content-Type", "") else body
        try:
            with urllib.request.urlopen(request) as r:
                return r.status, decoded(r.read(), r.headers), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, decoded(e.read(), e.headers), dict(e.headers)

    def mails(self, to):
        """The messages the test SMTP server received for `to`, oldest first: (subject, body, first link)."""
        found = []
        for path in sorted(glob.glob(os.path.join(self.mail_dir, "*.eml"))):
            with open(path, "rb") as f:
                message = email.message_from_bytes(f.read(), policy=email.policy.default)
            if message["X-Envelope-To"] != to:
                continue
            body = message.get_content()
            links = [w for w in body.split() if w.startswith("http")]
            found.append((str(message["Subject"]), body, links[0] if links else None))
        return found

    def wait_for_mail(self, to, subject):
        return self.wait(lambda d: next((m for m in self.mails(to) if subject in m[0]), None), f"a mail to {to} with “{subject}”")

    def screenshot(self, name, height):
        """The page from its top, in a window tall enough to show what matters."""
        self.driver.set_window_size(1200, height)
        self.driver.execute_script("window.scrollTo(0, 0)")
        time.sleep(0.3)
        self.driver.save_screenshot(os.path.join(self.screenshots, name))
        self.driver.set_window_size(1200, 1000)

    def rating_count(self):
        text = self.one("#rating").text
        digits = "".join(ch if ch.isdigit() else " " for ch in text.split("·")[-1]).split()
        return int(digits[0]) if "·" in text and digits else 0

    def comment(self, detail):
        matches = [c for c in self.css(".comment") if detail in c.text]
        return matches[0] if matches else None

    # -- the story ----------------------------------------------------------------------------

    def page_is_locked_down(self):
        status, _, headers = self.api("GET", "/")
        policy = {k.lower(): v for k, v in headers.items()}.get("content-security-policy", "")
        assert status == 200 and "script-src 'self'" in policy and "unsafe-inline" not in policy, policy

    def list_shows_newest_featured(self):
        self.go("#/")
        featured = self.one(".featured .cafe-name")
        status, page, _ = self.api("GET", "/v1/cafes?limit=1")
        assert featured.text == page["items"][0]["name"], (featured.text, page)
        self.wait(lambda d: len(self.css(".cafe-row")) >= 5, "the other cafes")
        self.loads_thumbnails(".cafe-row img", "the cafe list", at_least=2)
        self.screenshot("cafes.png", height=1400)

    def sign_up(self):
        self.go("#/account")
        self.one("#signup-username").send_keys(self.username)
        self.one("#signup-password").send_keys("short")
        self.one("#signup button[type=submit]").click()
        error = self.wait(lambda d: self.one("#signup-password-error").text, "the error next to the password field")
        assert "8" in error, error
        self.one("#signup-password").clear()
        self.one("#signup-password").send_keys("correct horse battery")
        self.one("#signup-email").send_keys(f"{self.username}@example.com")
        self.one("#signup button[type=submit]").click()
        self.wait(lambda d: self.one("#nav-account").text == self.username, "logged in as the new user")
        self.driver.refresh()
        self.wait(lambda d: self.one("#nav-account").text == self.username, "still logged in after a reload")
        self.token = self.driver.execute_script("return localStorage.getItem('token')")

    def verifies_email(self):
        address = f"{self.username}@example.com"
        self.go("#/account")
        self.wait(lambda d: self.one("#email-state").text == "未確認", "the address shown unverified")
        subject, body, link = self.wait_for_mail(address, "メールアドレスの確認")   # in the page's language
        assert f"{self.username} さん" in body and "/#/verify-email/" in link, body
        self.driver.get(link)
        self.wait(lambda d: "確認しました" in self.one("#verify-result").text, "the address verified")
        assert "verify-email" not in self.driver.current_url, "the token leaves the address bar"
        self.go("#/account")
        self.wait(lambda d: self.one("#email-state").text == "確認済み", "shown verified")

    def search_japanese_two_characters(self):
        self.go("#/")
        self.one("#search").send_keys("抹茶")
        self.wait(lambda d: [e.text for e in self.css("#cafe-list .cafe-name")] == ["抹茶カフェ 翠"], "only the matcha cafe")
        assert "「抹茶」" in self.one("#matching").text
        self.one("#search").clear()
        self.one("#search").send_keys("ＣＯＦＦＥＥ")   # full-width, normalised as the server does
        self.wait(lambda d: "「coffee」" in self.one("#matching").text, "the normalised keyword shown")

    def near_me_open_now_and_hours(self):
        """A reader in Daikanyama (a faked location) orders by distance: the browser asks only then."""
        here = {"latitude": 35.6490, "longitude": 139.7030, "accuracy": 10}
        self.driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": self.base, "permissions": ["geolocation"]})
        self.driver.execute_cdp_cmd("Emulation.setGeolocationOverride", here)
        self.go("#/")
        self.one("#search").send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)   # an input event: the list forgets the last search
        self.wait(lambda d: self.one("#matching").text == "", "no keyword")
        assert self.one("#open-now-label").get_attribute("hidden") is not None, "open-now shows only with the nearest order"
        Select(self.one("#sort")).select_by_value("near")
        _, near, _ = self.api("GET", f"/v1/cafes?near={here['latitude']},{here['longitude']}")
        expected = [c["name"] for c in near["items"]]
        assert expected[:2] == ["Café Lumière", "Roastery 42"], expected
        self.wait(lambda d: [e.text for e in self.css("#cafe-list .cafe-name")] == expected, "the cafes near Daikanyama, nearest first")
        distances = [e.text for e in self.css("#cafe-list .distance")]
        assert len(distances) == len(expected) and distances[0].endswith(" m"), distances
        notes = [e.text for e in self.css("#cafe-list .hours-note")]
        assert [n.startswith("営業中") for n in notes] == [c["openNow"] for c in near["items"]], (notes, near["items"])
        self.one("#open-now").click()
        _, open_now, _ = self.api("GET", f"/v1/cafes?near={here['latitude']},{here['longitude']}&openNow=true")
        names = [c["name"] for c in open_now["items"]]
        self.wait(lambda d: [e.text for e in self.css("#cafe-list .cafe-name")] == names or (not names and "該当" in self.one("#cafe-list").text),
                  "only the cafes open now")
        self.one("#open-now").click()
        self.wait(lambda d: len(self.css("#cafe-list .cafe-name")) == len(expected), "all near cafes again")
        self.css("#cafe-list .cafe-row, #cafe-list .featured")[0].click()
        self.wait(lambda d: self.one("#cafe-name").text == "Café Lumière", "the nearest cafe's page")
        assert "代官山" in self.one("#cafe-address").text
        rows = [r.text for r in self.css("#cafe-hours tr")]
        assert len(rows) == 7 and all("07:30–21:00" in r for r in rows), rows
        assert self.one("#cafe-open").text.startswith("営業中" if near["items"][0]["openNow"] else "営業時間外")
        self.screenshot("cafe-hours.png", height=1200)
        self.go("#/")
        Select(self.one("#sort")).select_by_value("newest")

    def open_cafe(self):
        self.go("#/")
        self.one("#search").clear()
        self.one("#search").send_keys("抹茶")
        self.wait(lambda d: [e.text for e in self.css("#cafe-list .cafe-name")] == ["抹茶カフェ 翠"], "the matcha cafe")
        self.one("#cafe-list .cafe-row").click()
        self.wait(lambda d: self.one("#cafe-name").text == "抹茶カフェ 翠", "the cafe page")
        self.cafe_id = self.driver.current_url.rsplit("/", 1)[-1]

    def watching(self, hash_, ready):
        """Another reader's browser on `hash_`, once `ready` (a CSS selector) shows, marked so that a reload would show."""
        other = self.browser()
        other.get(f"{self.base}/{hash_}")
        WebDriverWait(other, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, ready))
        other.execute_script("window.notReloaded = true")
        return other

    def post_review_with_photo(self):
        before = self.rating_count()
        # Two other readers, on this cafe's page and on the photo wall, see the review arrive without a reload.
        page = self.watching(f"#/cafes/{self.cafe_id}", "#rating")
        wall = self.watching("#/wall", "#wall figure")
        self.one("#review input[name=star][value='3']").click()
        self.one("#review-detail").send_keys("宇治の抹茶ラテが最高でした")
        path = os.path.join(tempfile.mkdtemp(), "latte.png")
        with open(path, "wb") as f:
            f.write(png())
        self.one("#review-photo").send_keys(path)
        self.one("#review button[type=submit]").click()
        item = self.wait(lambda d: self.comment("宇治の抹茶ラテが最高でした"), "the new comment listed")
        self.comment_id = item.get_attribute("data-comment-id")
        self.wait(lambda d: self.driver.execute_script(
            "const i = document.querySelector(`[data-comment-id='${arguments[0]}'] img.comment-photo`); return i && i.complete && i.naturalWidth > 0",
            self.comment_id), "its photo shown")
        assert "プレミアム" in self.comment("宇治の抹茶ラテが最高でした").text
        self.wait(lambda d: self.rating_count() == before + 1, f"the comment count going from {before} to {before + 1} (worker)")
        try:
            for other, selector, where in [(page, f"li[data-comment-id='{self.comment_id}'] img.comment-photo", "the other reader's cafe page"),
                                           (wall, f"figure[data-comment-id='{self.comment_id}'] img", "the other reader's photo wall")]:
                try:
                    WebDriverWait(other, WAIT).until(lambda d: d.execute_script(
                        "const i = document.querySelector(arguments[0]); return window.notReloaded && i && i.complete && i.naturalWidth > 0", selector))
                except TimeoutException:
                    raise AssertionError(f"timed out waiting for: the new comment and its photo live on {where}")
            try:
                WebDriverWait(page, WAIT).until(lambda d: f"{before + 1}" in d.find_element(By.CSS_SELECTOR, "#rating").text
                                                and d.execute_script("return window.notReloaded"))
            except TimeoutException:
                raise AssertionError("timed out waiting for: the new stars live on the other reader's cafe page")
        finally:
            page.quit()
            wall.quit()
        self.screenshot("cafe.png", height=1900)

    def keyboard_and_phone(self):
        """The star picker works from the keyboard; a phone-sized screen needs no sideways scrolling."""
        self.go(f"#/cafes/{self.cafe_id}")
        first = self.one("#review input[name=star][value='1']")
        self.driver.execute_script("arguments[0].focus()", first)
        first.send_keys(Keys.SPACE)
        first.send_keys(Keys.ARROW_RIGHT)
        self.wait(lambda d: d.execute_script("return document.querySelector('#review input[name=star]:checked')?.value") == "2",
                  "arrow keys moving the star choice")
        # A phone's viewport (a headless window cannot be narrower than 500 px; emulation can).
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        try:
            for page in ["#/", f"#/cafes/{self.cafe_id}", "#/wall", "#/account"]:
                self.go(page)
                self.one("main *")
                time.sleep(0.3)
                overflow = self.driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
                assert overflow <= 0, f"{page} scrolls sideways by {overflow}px on a phone"
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def edit_review(self):
        self.go(f"#/cafes/{self.cafe_id}")
        self.one(f"[data-comment-id='{self.comment_id}'] .edit").click()
        area = self.one(".edit-form .edit-detail")
        area.clear()
        area.send_keys("抹茶ラテ、二度目も最高")
        self.one(".edit-form button[type=submit]").click()
        self.wait(lambda d: self.comment("抹茶ラテ、二度目も最高") is not None, "the edited text")

    def someone_elses_comment(self):
        self.other_username = "other_" + uuid.uuid4().hex[:6]
        status, other, _ = self.api("POST", "/v1/users", {"username": self.other_username, "password": "correct horse battery"})
        assert status == 201, other
        self.other_token, self.other_id = other["sessionToken"], other["user"]["id"]
        status, theirs, _ = self.api("POST", f"/v1/cafes/{self.cafe_id}/comments", {"detail": "他の人の感想", "star": 2}, other["sessionToken"])
        assert status == 201, theirs
        self.driver.refresh()
        item = self.wait(lambda d: self.comment("他の人の感想"), "the other user's comment")
        assert not item.find_elements(By.CSS_SELECTOR, ".edit, .delete"), "no edit or delete controls on another user's comment"
        status = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/v1/comments/' + arguments[0], {method: 'PATCH', headers: {'Authorization': 'Bearer ' + localStorage.getItem('token'),
                  'Content-Type': 'application/json'}, body: JSON.stringify({detail: 'forged'})}).then(r => done(r.status));
        """, theirs["id"])
        assert status == 403, f"a forged edit of another user's comment answered {status}"

    def report_someone_elses_comment(self):
        item = self.wait(lambda d: self.comment("他の人の感想"), "the other user's comment")
        item.find_element(By.CSS_SELECTOR, ".report").click()
        reason = self.one(".report-form input[name=reason]")
        reason.send_keys("広告のようです")
        self.one(".report-form button[type=submit]").click()
        self.wait(lambda d: "通報しました" in self.comment("他の人の感想").text, "the report acknowledged")
        self.reported_id = item.get_attribute("data-comment-id")

    def helpful_votes_bars_and_owner_reply(self):
        """Votes another's comment helpful, sees the stars by count and the orders change, and answers as the cafe's owner."""
        self.go(f"#/cafes/{self.cafe_id}")
        theirs = self.wait(lambda d: self.comment("他の人の感想"), "the other user's comment")
        their_id = theirs.get_attribute("data-comment-id")
        theirs.find_element(By.CSS_SELECTOR, "button.helpful").click()
        self.wait(lambda d: self.comment("他の人の感想").find_element(By.CSS_SELECTOR, "button.helpful").get_attribute("aria-pressed") == "true"
                  and "(1)" in self.comment("他の人の感想").find_element(By.CSS_SELECTOR, "button.helpful").text, "the vote shown")
        # The worker counts it; then the most helpful come first.
        def counted():
            _, page, _ = self.api("GET", f"/v1/cafes/{self.cafe_id}/comments?sort=helpful&limit=1")
            return page["items"] and page["items"][0]["id"] == their_id and page["items"][0]["helpfulCount"] == 1
        self.wait(lambda d: counted(), "the vote counted by the worker")
        first = lambda: (self.css("#comments .comment .comment-detail") or [None])[0]
        Select(self.one("#comment-sort")).select_by_value("helpful")
        self.wait(lambda d: first() is not None and first().text == "他の人の感想", "the helpful order")
        Select(self.one("#comment-sort")).select_by_value("stars")
        self.wait(lambda d: first() is not None and "プレミアム" in self.css("#comments .comment")[0].text, "the stars order")
        # The bars: one per star, their counts adding up to the comments.
        counts = {int(bar.get_attribute("data-star")): int(bar.find_element(By.CSS_SELECTOR, ".bar-count").text)
                  for bar in self.css("#star-bars .star-bar")}
        assert sorted(counts) == [1, 2, 3] and counts[3] >= 1 and counts[2] >= 1, counts
        assert sum(counts.values()) == self.rating_count(), (counts, self.rating_count())
        # An administrator makes this reader and the other one owners; this reader answers in the page.
        status, admin, _ = self.api("POST", "/v1/sessions", {"username": "admin", "password": self.admin_password})
        assert status == 201, admin
        _, me, _ = self.api("GET", "/v1/users/me", token=self.token)
        for account in (me["id"], self.other_id):
            status, cafe, _ = self.api("PUT", f"/v1/admin/cafes/{self.cafe_id}/owners/{account}", token=admin["sessionToken"])
            assert status == 200 and self.username in cafe["owners"], cafe
        self.driver.refresh()
        self.wait(lambda d: self.comment("他の人の感想") is not None, "the page again")
        self.comment("他の人の感想").find_element(By.CSS_SELECTOR, "button.reply").click()
        self.one(".reply-form .reply-input").send_keys("ご来店ありがとうございました")
        self.one(".reply-form button[type=submit]").click()
        self.wait(lambda d: "ご来店ありがとうございました" in (self.comment("他の人の感想").find_elements(By.CSS_SELECTOR, ".owner-reply .reply-text")
                                                            or [None])[0].text, "the owner's reply under the comment")
        # The other owner answers this reader's review: the reader is mailed, once.
        status, answered, _ = self.api("PUT", f"/v1/comments/{self.comment_id}/reply", {"text": "またお待ちしています"}, self.other_token)
        assert status == 200, answered
        to = f"{self.username}@example.com"
        mail = self.wait(lambda d: next((m for m in self.mails(to) if "またお待ちしています" in m[1]), None), "the mail about the owner's reply")
        assert f"/#/cafes/{self.cafe_id}" in mail[1], mail
        self.wait(lambda d: "またお待ちしています" in self.comment("抹茶ラテ、二度目も最高").text, "the reply live on this reader's page")

    def photo_wall(self):
        self.go("#/wall")
        self.wait(lambda d: self.driver.execute_script(
            "const i = document.querySelector(`.tile[data-comment-id='${arguments[0]}'] img`); return i && i.complete && i.naturalWidth > 0",
            self.comment_id), "our photo on the wall")
        assert "抹茶カフェ 翠" in self.one(f".tile[data-comment-id='{self.comment_id}']").text
        self.loads_thumbnails(".tile img", "the photo wall", at_least=2)   # the demo's comment photos are there too

    def loads_thumbnails(self, selector, where, at_least=1):
        """What the browser chose from each photo's srcset: a size for a thumbnail, never the original."""
        def chosen(d):
            sources = self.driver.execute_script(
                "return [...document.querySelectorAll(arguments[0])].filter(i => i.complete && i.naturalWidth > 0).map(i => i.currentSrc)", selector)
            return sources if len(sources) >= at_least else None
        sources = self.wait(chosen, f"{at_least} loaded photos in {where}")
        for source in sources:
            width = int(source.split("?w=")[1]) if "?w=" in source else None
            assert width is not None and width <= 640, f"{where} loaded {source}, not a thumbnail"

    def html_stays_text(self):
        self.go(f"#/cafes/{self.cafe_id}")
        hostile = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
        self.one("#review input[name=star][value='1']").click()
        self.one("#review-detail").send_keys(hostile)
        self.one("#review button[type=submit]").click()
        item = self.wait(lambda d: self.comment(hostile), "the hostile comment, shown as text")
        detail = item.find_element(By.CSS_SELECTOR, ".comment-detail")
        assert detail.text == hostile, detail.text
        assert not detail.find_elements(By.CSS_SELECTOR, "img, script")
        assert self.driver.execute_script("return window.__xss") is None

    def delete_review(self):
        self.go(f"#/cafes/{self.cafe_id}")
        self.one(f"[data-comment-id='{self.comment_id}'] .delete").click()
        alert = self.wait(lambda d: d.switch_to.alert, "the confirmation")
        alert.accept()
        self.wait(lambda d: not self.css(f"[data-comment-id='{self.comment_id}']"), "the comment gone")
        status, _, _ = self.api("GET", f"/v1/cafes/{self.cafe_id}/comments")
        assert status == 200

    def console_refuses_non_admin(self):
        self.driver.get(f"{self.base}/admin")
        refusal = self.one("#admin-refusal")
        assert "管理者" in refusal.text, refusal.text
        assert not self.css(".admin-table, #reports"), "no console data for a non-admin"
        status, _, _ = self.api("GET", "/v1/admin/cafes", token=self.token)
        assert status == 403, status

    def log_out(self):
        self.go("#/account")
        self.one("#logout").click()
        self.one("#login")
        assert self.driver.execute_script("return localStorage.getItem('token')") is None
        status, _, _ = self.api("GET", "/v1/users/me", token=self.token)
        assert status == 401, "the session was revoked on the server too"

    def switch_language(self):
        self.go("#/")
        assert self.one("nav a[href='#/']").text == "カフェ"
        self.one("#lang").click()
        self.wait(lambda d: self.one("nav a[href='#/']").text == "Cafes", "English UI")
        # Counts in English take the plural form their number needs: "1 comment", "2 comments".
        self.wait(lambda d: self.css(".stars .count"), "the list's comment counts")
        counts = [e.text.split() for e in self.css(".stars .count")]
        for words in counts:
            assert len(words) == 3 and words[2] == ("comment" if words[1] == "1" else "comments"), words

    # -- the operator console (in English, after switch_language) ------------------------------

    def admin_logs_in(self):
        self.go("#/account")
        self.one("#login-username").send_keys("admin")
        self.one("#login-password").send_keys(self.admin_password)
        self.one("#login button[type=submit]").click()
        self.wait(lambda d: self.one("#nav-account").text == "admin", "logged in as the demo admin")
        self.admin_token = self.driver.execute_script("return localStorage.getItem('token')")
        self.wait(lambda d: self.one("#nav-admin").is_displayed(), "the console link for an admin")

    def console_creates_cafe_with_photo(self):
        self.driver.get(f"{self.base}/admin")
        self.wait(lambda d: len(self.css("#admin-cafes tr")) >= 5, "the cafe table")
        self.one("#admin-new-cafe").click()
        self.one("#cafe-name").send_keys("Console Coffee")
        self.one("#cafe-catchCopy").send_keys("Roasted on Tuesdays")
        self.one("#cafe-introduction").send_keys("A console-made cafe with single-origin pour-overs.")
        self.one("#cafe-publishDate").send_keys("2026-12-01")
        path = os.path.join(tempfile.mkdtemp(), "front.png")
        with open(path, "wb") as f:
            f.write(png(400, 240))
        self.one("#cafe-photo").send_keys(path)
        self.wait(lambda d: d.execute_script("const i = document.getElementById('cafe-photo-preview'); "
                                             "return !i.hidden && i.src.startsWith('blob:') && i.complete && i.naturalWidth > 0"), "the photo previewed")
        self.one("#cafe-save").click()
        self.wait(lambda d: "/admin/cafes/" in d.current_url and d.current_url.rsplit("/", 1)[-1].isdigit(), "the new cafe's page")
        self.console_cafe = self.driver.current_url.rsplit("/", 1)[-1]
        status, cafe, _ = self.api("GET", f"/v1/cafes/{self.console_cafe}")
        assert status == 200 and cafe["imageUrl"] and cafe["publishDate"] == "2026-12-01", cafe
        status, _, _ = self.api("GET", cafe["imageUrl"])
        assert status == 200
        self.wait(lambda d: d.execute_script("const i = document.getElementById('cafe-photo-preview'); return i.complete && i.naturalWidth > 0"),
                  "the uploaded photo shown")
        self.screenshot("console-cafe.png", height=1100)

    def console_edits_cafe(self):
        name = self.one("#cafe-name")
        name.clear()
        name.send_keys("Console Coffee Roasters")
        self.one("#cafe-save").click()
        self.wait(lambda d: self.one("#admin-notice").text == "Saved.", "saved")
        status, cafe, _ = self.api("GET", f"/v1/cafes/{self.console_cafe}")
        assert cafe["name"] == "Console Coffee Roasters", cafe

    def console_sets_place_and_hours(self):
        for selector, text in [("#cafe-location", "35.0116"), ("#cafe-longitude", "135.7681"), ("#cafe-address", "京都市中京区"),
                               ("#cafe-hours-mon", "8-18")]:
            field = self.one(selector)
            field.clear()
            field.send_keys(text)
        self.one("#cafe-save").click()
        self.wait(lambda d: "08:00-18:00" in self.one("#cafe-form .error").text, "a malformed interval said before anything is sent")
        monday = self.one("#cafe-hours-mon")
        monday.clear()
        monday.send_keys("08:00-18:00, 19:00-02:00")
        self.one("#cafe-exceptions").send_keys("2026-12-31: closed")
        self.one("#cafe-save").click()
        cafe = self.wait(lambda d: (lambda c: c if c.get("openingHours") else None)(self.api("GET", f"/v1/cafes/{self.console_cafe}")[1]),
                         "the place and hours saved")
        assert cafe["location"] == {"latitude": 35.0116, "longitude": 135.7681}, cafe
        assert cafe["address"] == "京都市中京区" and cafe["timeZone"] == "Asia/Tokyo", cafe
        assert cafe["openingHours"]["mon"] == [["08:00", "18:00"], ["19:00", "02:00"]], cafe["openingHours"]
        assert cafe["openingHours"]["exceptions"] == [{"date": "2026-12-31", "hours": []}], cafe["openingHours"]
        assert isinstance(cafe["openNow"], bool), cafe
        # A time zone PostgreSQL does not know is refused under its field.
        zone = self.one("#cafe-timeZone")
        zone.clear()
        zone.send_keys("Mars/Olympus")
        self.one("#cafe-save").click()
        self.wait(lambda d: self.one("[data-error-for='timeZone']").text != "", "the zone refused")
        zone.clear()
        zone.send_keys("Asia/Tokyo")
        self.one("#cafe-save").click()
        self.wait(lambda d: self.one("[data-error-for='timeZone']").text == "", "saved again")

    def console_archives_and_restores(self):
        self.one("#cafe-archive").click()
        self.wait(lambda d: self.one("#cafe-state").text == "Archived", "archived")
        assert self.api("GET", f"/v1/cafes/{self.console_cafe}")[0] == 404
        _, found, _ = self.api("GET", "/v1/cafes?q=console")
        assert found["items"] == [], found
        assert "0 comments and 1 photos" in self.one("#cafe-delete-contents").text, self.one("#cafe-delete-contents").text
        assert not self.one("#cafe-delete").is_enabled(), "delete waits for the confirmation"
        self.one("#cafe-restore").click()
        self.wait(lambda d: self.one("#cafe-state").text == "Listed", "restored")
        assert self.api("GET", f"/v1/cafes/{self.console_cafe}")[0] == 200
        self.go("#/admin/cafes")
        self.one("#admin-cafe-search").send_keys("roasters")
        self.wait(lambda d: [e.text for e in self.css("#admin-cafes td:first-child a")] == ["Console Coffee Roasters"], "found by name")
        self.one("#admin-cafe-search").clear()
        self.one("#admin-cafe-search").send_keys(" ")
        self.wait(lambda d: len(self.css("#admin-cafes tr")) >= 5, "the whole table again")
        self.screenshot("console-cafes.png", height=1100)

    def console_deletes_archived_cafe(self):
        self.go(f"#/admin/cafes/{self.console_cafe}")
        self.one("#cafe-archive").click()
        self.one("#cafe-delete-confirm").click()
        self.one("#cafe-delete").click()
        self.wait(lambda d: d.current_url.endswith("#/admin/cafes"), "back at the table")
        self.wait(lambda d: "Console Coffee Roasters" not in self.one("#admin-cafes").text, "gone from the table")
        assert self.api("GET", f"/v1/admin/cafes/{self.console_cafe}", token=self.admin_token)[0] == 404

    def console_owners_and_replies(self):
        """The console lists a cafe's owners and removes one; it hides an owner's reply and shows it again."""
        self.go(f"#/admin/cafes/{self.cafe_id}")
        self.wait(lambda d: self.other_username in self.one("#cafe-owners").text and self.username in self.one("#cafe-owners").text, "the owners")
        self.one(f"#cafe-owners .owner-remove[data-username='{self.other_username}']").click()
        self.wait(lambda d: self.other_username not in self.one("#cafe-owners").text, "an owner removed")
        def reply():
            _, page, _ = self.api("GET", f"/v1/cafes/{self.cafe_id}/comments")
            return next(c["reply"] for c in page["items"] if c["id"] == self.reported_id)
        self.go("#/admin/reports")
        item = self.one(f"#reports [data-comment-id='{self.reported_id}']")
        assert "ご来店ありがとうございました" in item.text, item.text
        item.find_element(By.CSS_SELECTOR, ".reply-hide").click()
        self.one(f"#reports [data-comment-id='{self.reported_id}'] .reply-restore")
        assert reply() is None, "a hidden reply is in no read"
        self.one(f"#reports [data-comment-id='{self.reported_id}'] .reply-restore").click()
        self.one(f"#reports [data-comment-id='{self.reported_id}'] .reply-hide")
        assert reply()["text"] == "ご来店ありがとうございました"

    def console_hides_reported_comment(self):
        def aggregates():
            _, cafe, _ = self.api("GET", f"/v1/cafes/{self.cafe_id}")
            return cafe["commentSum"], cafe["commentAmount"]
        before = aggregates()
        self.go("#/admin/reports")
        item = self.one(f"#reports [data-comment-id='{self.reported_id}']")
        assert "広告のようです" in item.text and "他の人の感想" in item.text, item.text
        self.screenshot("console-reports.png", height=900)
        item.find_element(By.CSS_SELECTOR, ".hide").click()
        self.wait(lambda d: not self.css(f"#reports [data-comment-id='{self.reported_id}']"), "gone from the queue")
        _, comments, _ = self.api("GET", f"/v1/cafes/{self.cafe_id}/comments")
        assert self.reported_id not in [c["id"] for c in comments["items"]]
        self.wait(lambda d: aggregates() == (before[0] - 1, before[1] - 2), f"the aggregates dropping from {before} (worker)")
        self.go("#/admin/users")
        row = self.one(f"#admin-users tr[data-username='{self.other_username}']")
        row.find_element(By.CSS_SELECTOR, "td a").click()
        hidden = self.one(f"#user-comments [data-comment-id='{self.reported_id}']")
        assert "Hidden" in hidden.text, hidden.text
        hidden.find_element(By.CSS_SELECTOR, ".restore").click()
        self.wait(lambda d: "Hidden" not in self.one(f"#user-comments [data-comment-id='{self.reported_id}']").text, "restored")
        self.wait(lambda d: aggregates() == before, f"the aggregates back to {before} (worker)")

    def console_blocks_user(self):
        self.go("#/admin/users")
        self.one("#admin-user-search").send_keys(self.other_username)
        row = self.wait(lambda d: self.css(f"#admin-users tr[data-username='{self.other_username}']") and len(self.css("#admin-users tr")) == 1
                        and self.css("#admin-users tr")[0], "only that user")
        row.find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
        row.find_element(By.CSS_SELECTOR, ".block").click()
        self.wait(lambda d: "Blocked" in self.one(f"#admin-users tr[data-username='{self.other_username}']").text, "blocked")
        status, problem, _ = self.api("POST", "/v1/sessions", {"username": self.other_username, "password": "correct horse battery"})
        assert status == 403 and problem["code"] == "account_blocked", (status, problem)
        _, comments, _ = self.api("GET", f"/v1/cafes/{self.cafe_id}/comments")
        assert self.reported_id not in [c["id"] for c in comments["items"]], "their comments hidden in the same action"

    def console_deletes_user(self):
        """The blocked user's account, deleted after the confirmation that counts what goes with it."""
        self.go("#/admin/users")
        self.one("#admin-user-search").clear()
        self.one("#admin-user-search").send_keys(self.other_username)
        def open_user(d):
            # Found and clicked in one go, again if the list was drawn anew in between (an answer to an
            # earlier keystroke's search can arrive last: once, in CI, the row found went stale).
            rows = self.css(f"#admin-users tr[data-username='{self.other_username}']")
            if len(self.css("#admin-users tr")) != 1 or not rows:
                return False
            rows[0].find_element(By.CSS_SELECTOR, "td a").click()
            return True
        self.wait(open_user, "that user opened")
        contents = self.one("#user-delete-contents").text
        assert "0 comments (1 hidden)" in contents, contents   # the block hid their comment
        assert not self.one("#user-delete").is_enabled(), "delete waits for the confirmation"
        self.one("#user-delete-confirm").click()
        self.one("#user-delete").click()
        self.wait(lambda d: self.driver.current_url.endswith("#/admin/users"), "back on the user list")
        status, page, _ = self.api("GET", f"/v1/admin/users?q={self.other_username}", token=self.admin_token)
        assert status == 200 and page["items"] == [], page

    def console_jobs(self):
        self.go("#/admin/jobs")
        self.one("#jobs-outbox")
        reconciles = lambda: len([r for r in self.css("#job-runs tr") if r.text.startswith("reconcile")])
        before = reconciles()
        self.one("#reconcile").click()
        self.wait(lambda d: self.one("#admin-notice").text == "Reconcile requested.", "the request acknowledged")
        self.wait(lambda d: reconciles() > before, "a new reconcile run shown (the page refreshes itself)")
        # The server runs with backups at their defaults: its first full backup, and the archive working.
        self.wait(lambda d: self.one("#backup-runs").text.startswith("full"), "the first backup shown")
        self.wait(lambda d: self.one("#jobs-archive").text == "working", "WAL archiving shown as working")
        self.screenshot("console-jobs.png", height=900)

    def console_audit(self):
        self.go("#/admin/audit")
        self.wait(lambda d: {"cafe.create", "cafe.update", "cafe.archive", "cafe.restore", "cafe.delete", "comment.hide", "comment.restore", "user.block", "user.delete",
                             "aggregates.reconcile"} <= {r.get_attribute("data-action") for r in self.css("#audit tr")}, "every action in the audit log")

    def console_mail(self):
        self.go("#/admin/mail")
        address = f"{self.username}@example.com"
        item = self.one(f"#admin-mail [data-recipient='{address}']")
        assert item.get_attribute("data-state") == "sent" and "Sent" in item.text, item.text
        assert not item.find_elements(By.CSS_SELECTOR, ".mail-body"), "a sent mail's text (its link) is not kept"

    def recovers_password_and_leaves(self, language):
        """Forgot password → the mail → a new password → log in; then the account deleted. In the UI's language."""
        texts = {"en": {"subject": "Reset your CafeReview password", "done": "Your password is changed", "deleted": "Your account is deleted"},
                 "ja": {"subject": "パスワードの再設定", "done": "パスワードを変更し", "deleted": "アカウントを削除しました"}}[language]
        name = f"forgetful_{language}_{uuid.uuid4().hex[:6]}"
        address = f"{name}@example.com"
        status, _, _ = self.api("POST", "/v1/users", {"username": name, "password": "the old password", "email": address})
        assert status == 201, status
        self.driver.execute_script("localStorage.removeItem('token'); localStorage.removeItem('user')")
        self.go("#/account")
        self.one("#forgot-link").click()
        self.one("#forgot-email").send_keys(address)
        self.one("#forgot button[type=submit]").click()
        self.one("#forgot-sent")
        subject, body, link = self.wait_for_mail(address, texts["subject"])
        assert name in body and link.startswith(self.base + "/#/reset-password/"), (link, body)
        self.driver.get(link)
        self.one("#reset-password").send_keys("a brand new password")
        self.one("#reset button[type=submit]").click()
        self.wait(lambda d: texts["done"] in self.one("#reset-done").text, "the password reset")
        self.wait(lambda d: self.one("#nav-account").text == name, "logged in by the reset")
        self.driver.get(link)   # a second use is refused
        self.one("#reset-password").send_keys("yet another password")
        self.one("#reset button[type=submit]").click()
        self.wait(lambda d: self.css("#reset .error") and self.css("#reset .error")[0].text, "the used link refused")
        self.go("#/account")
        self.one("#logout").click()
        self.one("#login-username").send_keys(name)
        self.one("#login-password").send_keys("a brand new password")
        self.one("#login button[type=submit]").click()
        self.wait(lambda d: self.one("#nav-account").text == name, "logged in with the new password")
        self.go("#/account")
        self.one("#delete-account-password").send_keys("a brand new password")
        assert not self.one("#delete-account-submit").is_enabled(), "deleting waits for the confirmation"
        self.one("#delete-account-confirm").click()
        self.one("#delete-account-submit").click()
        self.wait(lambda d: texts["deleted"] in self.one("#account-deleted").text, "the account deleted")
        status, _, _ = self.api("POST", "/v1/sessions", {"username": name, "password": "a brand new password"})
        assert status == 401, status

    def recovery_in_english(self):
        self.recovers_password_and_leaves("en")

    def recovery_in_japanese(self):
        self.go("#/")
        self.one("#lang").click()
        self.wait(lambda d: self.one("nav a[href='#/']").text == "カフェ", "Japanese UI")
        self.recovers_password_and_leaves("ja")

    def run(self):
        steps = [self.page_is_locked_down, self.list_shows_newest_featured, self.sign_up, self.verifies_email, self.search_japanese_two_characters,
                 self.near_me_open_now_and_hours, self.open_cafe, self.post_review_with_photo, self.keyboard_and_phone, self.edit_review, self.someone_elses_comment,
                 self.report_someone_elses_comment, self.helpful_votes_bars_and_owner_reply, self.photo_wall, self.html_stays_text, self.delete_review, self.console_refuses_non_admin,
                 self.log_out, self.switch_language, self.admin_logs_in, self.console_creates_cafe_with_photo, self.console_edits_cafe,
                 self.console_sets_place_and_hours, self.console_archives_and_restores, self.console_deletes_archived_cafe, self.console_owners_and_replies,
                 self.console_hides_reported_comment, self.console_blocks_user, self.console_deletes_user, self.console_jobs,
                 self.console_audit, self.console_mail, self.recovery_in_english, self.recovery_in_japanese]
        try:
            for step in steps:
                started = time.monotonic()
                step()
                print(f"  ok  {step.__name__} ({time.monotonic() - started:.1f} s)")
        finally:
            severe = [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE" and "favicon" not in e.get("message", "")]
            self.driver.quit()
        # The story's deliberate failures (a short password, a forged edit) are logged by the browser as
        # failed requests; a script error or any other failed request is a bug.
        unexpected = [e for e in severe if not (e.get("source") == "network" and any(f"status of {c}" in e["message"] for c in (400, 401, 403)))]
        assert not unexpected, f"console errors: {unexpected}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--admin-file", required=True, help="the demo admin's credentials as `cafe serve` saved them")
    parser.add_argument("--mail-dir", required=True, help="where the test SMTP server writes the messages it receives")
    args = parser.parse_args()
    try:
        Story(args.base, args.screenshots, args.admin_file, args.mail_dir).run()
    except AssertionError as e:
        print(f"FAILED: {e}")
        sys.exit(1)
    print("browser tests passed")

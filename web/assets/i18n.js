// UI text in Japanese and English: the browser's language first, switchable, remembered.
const texts = {
  ja: {
    skip: '本文へ移動', 'nav.cafes': 'カフェ', 'nav.wall': 'フォトウォール', 'nav.account': 'アカウント', 'nav.login': 'ログイン',
    'lang.switch': 'English', search: 'キーワードで検索', 'search.matching': '検索語（正規化後）: ', 'sort.label': '並び順',
    'sort.newest': '新着順', 'sort.rating': '評価順', 'sort.popular': '人気順', more: 'もっと見る', noCafes: '該当するカフェはありません。',
    comments: '件のコメント', commentsTitle: 'コメント', noComments: 'まだコメントはありません。', noRating: '評価なし', featured: '新着',
    'review.title': 'レビューを書く', 'review.star': '評価', 'review.detail': 'コメント', 'review.photo': '写真（任意）',
    'review.submit': '投稿する', 'review.login': 'レビューするにはログインしてください。', 'review.uploading': '写真をアップロード中…',
    edit: '編集', delete: '削除', save: '保存', cancel: 'キャンセル', 'delete.confirm': 'このコメントを削除しますか？',
    star1: 'まあまあ', star2: 'おすすめ', star3: 'プレミアム', by: '投稿者', wall: 'みんなの写真', wallEmpty: 'まだ写真はありません。',
    'account.login': 'ログイン', 'account.signup': '新規登録', username: 'ユーザー名', password: 'パスワード',
    'account.loggedIn': 'ログイン中: ', logout: 'ログアウト', notFound: 'ページが見つかりません。', error: 'エラーが発生しました: ',
    back: '← 一覧へ', 'nav.admin': '管理', report: '通報', 'report.reason': '通報の理由', 'report.send': '通報する',
    'report.done': '通報しました。運営が確認します。', 'report.already': 'このコメントはすでに通報済みです。',
    'mine.title': 'あなたのコメント', 'mine.none': 'まだコメントはありません。', 'mine.hidden': '非表示',
    'hidden.moderation': '運営により非表示になりました', 'hidden.block': 'アカウント停止により非表示です', 'hidden.archive': 'カフェが公開停止中です',
    email: 'メールアドレス', 'account.emailOptional': 'メールアドレス（任意・パスワード再設定に使います）', 'account.noEmail': 'メールアドレスは未登録です',
    'account.verified': '確認済み', 'account.unverified': '未確認', 'verify.resend': '確認メールを再送する', 'verify.sent': '確認メールを送りました。',
    'verify.done': 'メールアドレスを確認しました。', 'link.invalid': 'このリンクは無効か、期限切れか、すでに使われています。もう一度お試しください。',
    'forgot.link': 'パスワードをお忘れですか？', 'forgot.title': 'パスワードの再設定', 'forgot.help': '登録したメールアドレスに再設定用のリンクを送ります。',
    'forgot.send': 'リンクを送る', 'forgot.sent': 'このアドレスのアカウントがあれば、再設定用のリンクを送りました。メールをご確認ください。',
    'reset.title': '新しいパスワード', 'reset.submit': 'パスワードを設定', 'reset.done': 'パスワードを変更し、ログインしました。',
    'settings.title': 'アカウント設定', 'settings.language': 'メールの言語', 'settings.languageBrowser': 'ブラウザに合わせる',
    'settings.newPassword': '新しいパスワード', 'settings.currentPassword': '現在のパスワード（メールアドレス・パスワードの変更に必要）',
    'settings.saved': '保存しました。', 'export.title': 'データのダウンロード', 'export.help': 'アカウント、コメント、通報、写真の一覧を JSON でダウンロードします。',
    'export.button': 'ダウンロード', 'leave.title': 'アカウントの削除', 'leave.help': 'アカウント、コメント、写真が削除されます。元に戻せません。',
    'leave.confirm': 'すべて削除されることを理解しました', 'leave.button': 'アカウントを削除', 'leave.done': 'アカウントを削除しました。ご利用ありがとうございました。',
    'sort.rating.note': '評価順は加重平均（コメントの少ないお店はサイト全体の平均に近い値から始まります）で並びます。',
    'comments.sort': 'コメントの並び順', 'comments.newest': '新着順', 'comments.helpful': '参考になった順', 'comments.stars': '評価の高い順',
    helpful: '参考になった', 'helpful.count': '人が参考になったと言っています', 'bars.label': '評価の内訳',
    'reply.owner': 'オーナーからの返信', 'reply.write': '返信する', 'reply.edit': '返信を編集', 'reply.delete': '返信を削除',
    'reply.send': '返信を送る', 'reply.text': '返信', 'owners': 'オーナー',
    'sort.near': '近い順', openNow: '営業中のみ', 'near.asking': '現在地を確認しています…', 'near.refused': '現在地を取得できませんでした: ',
    'hours.open': '営業中', 'hours.closed': '営業時間外', 'hours.closesAt': '{day} {time}に閉店', 'hours.opensAt': '{day} {time}に開店',
    'hours.tomorrow': '明日', 'hours.title': '営業時間', 'hours.zone': '時刻は {zone} のものです。', 'hours.closedDay': '定休日',
    'hours.exceptions': '特別営業日', 'hours.badInterval': '「{text}」は 08:00-18:00 の形で書いてください。',
    mon: '月', tue: '火', wed: '水', thu: '木', fri: '金', sat: '土', sun: '日', address: '住所',
  },
  en: {
    skip: 'Skip to content', 'nav.cafes': 'Cafes', 'nav.wall': 'Photo wall', 'nav.account': 'Account', 'nav.login': 'Log in',
    'lang.switch': '日本語', search: 'Search by keyword', 'search.matching': 'Searching for (normalised): ', 'sort.label': 'Order',
    'sort.newest': 'Newest', 'sort.rating': 'Best rated', 'sort.popular': 'Most reviewed', more: 'Load more', noCafes: 'No cafes match.',
    comments: 'comments', 'comments.one': 'comment', commentsTitle: 'Comments', noComments: 'No comments yet.', noRating: 'No ratings yet', featured: 'New',
    'review.title': 'Write a review', 'review.star': 'Rating', 'review.detail': 'Comment', 'review.photo': 'Photo (optional)',
    'review.submit': 'Post', 'review.login': 'Log in to write a review.', 'review.uploading': 'Uploading the photo…',
    edit: 'Edit', delete: 'Delete', save: 'Save', cancel: 'Cancel', 'delete.confirm': 'Delete this comment?',
    star1: 'Fine', star2: 'Recommended', star3: 'Premium', by: 'by', wall: "Everyone's photos", wallEmpty: 'No photos yet.',
    'account.login': 'Log in', 'account.signup': 'Sign up', username: 'Username', password: 'Password',
    'account.loggedIn': 'Logged in as ', logout: 'Log out', notFound: 'Page not found.', error: 'Something went wrong: ',
    back: '← All cafes', 'nav.admin': 'Console', report: 'Report', 'report.reason': 'Why are you reporting this?', 'report.send': 'Send report',
    'report.done': 'Reported. An operator will look at it.', 'report.already': 'You have already reported this comment.',
    'mine.title': 'Your comments', 'mine.none': 'No comments yet.', 'mine.hidden': 'Hidden',
    'hidden.moderation': 'Hidden by an operator', 'hidden.block': 'Hidden while your account is blocked', 'hidden.archive': 'The cafe is archived',
    email: 'E-mail address', 'account.emailOptional': 'E-mail (optional; for resetting your password)', 'account.noEmail': 'No e-mail address yet',
    'account.verified': 'Verified', 'account.unverified': 'Not verified', 'verify.resend': 'Send the verification mail again', 'verify.sent': 'The verification mail is on its way.',
    'verify.done': 'Your e-mail address is verified.', 'link.invalid': 'This link is unknown, expired or used already. Please ask for a new one.',
    'forgot.link': 'Forgot your password?', 'forgot.title': 'Reset your password', 'forgot.help': 'We mail a link to reset it to the address of your account.',
    'forgot.send': 'Send the link', 'forgot.sent': 'If an account has this address, a link to reset its password is on its way. Check your mail.',
    'reset.title': 'A new password', 'reset.submit': 'Set the password', 'reset.done': 'Your password is changed and you are logged in.',
    'settings.title': 'Account settings', 'settings.language': 'Language of mails', 'settings.languageBrowser': 'As the browser',
    'settings.newPassword': 'New password', 'settings.currentPassword': 'Current password (to change the address or the password)',
    'settings.saved': 'Saved.', 'export.title': 'Download your data', 'export.help': 'Your account, comments, reports and photos, as one JSON file.',
    'export.button': 'Download', 'leave.title': 'Delete your account', 'leave.help': 'Your account, comments and photos are deleted. This cannot be undone.',
    'leave.confirm': 'I understand that everything is deleted', 'leave.button': 'Delete my account', 'leave.done': 'Your account is deleted. Thank you for using CafeReview.',
    'sort.rating.note': 'Best rated uses a weighted score: a cafe with few comments starts near the average of the whole site.',
    'comments.sort': 'Order of comments', 'comments.newest': 'Newest', 'comments.helpful': 'Most helpful', 'comments.stars': 'Most stars',
    helpful: 'Helpful', 'helpful.count': 'found this helpful', 'bars.label': 'Stars by count',
    'reply.owner': 'Reply from the owner', 'reply.write': 'Reply', 'reply.edit': 'Edit reply', 'reply.delete': 'Delete reply',
    'reply.send': 'Send reply', 'reply.text': 'Reply', 'owners': 'Owners',
    'sort.near': 'Nearest', openNow: 'Open now', 'near.asking': 'Finding where you are…', 'near.refused': 'Your location is not available: ',
    'hours.open': 'Open', 'hours.closed': 'Closed', 'hours.closesAt': 'closes {day} at {time}', 'hours.opensAt': 'opens {day} at {time}',
    'hours.tomorrow': 'tomorrow', 'hours.title': 'Opening hours', 'hours.zone': 'Times are in {zone}.', 'hours.closedDay': 'Closed',
    'hours.exceptions': 'Special days', 'hours.badInterval': 'Write "{text}" as 08:00-18:00.',
    mon: 'Mon', tue: 'Tue', wed: 'Wed', thu: 'Thu', fri: 'Fri', sat: 'Sat', sun: 'Sun', address: 'Address',
  },
};

let lang = localStorage.getItem('lang') || ((navigator.language || 'en').toLowerCase().startsWith('ja') ? 'ja' : 'en');

export const t = (key) => texts[lang][key] ?? texts.en[key] ?? key;

/// A count and its noun in the form the language's plural rules choose: "1 comment", "2 comments",
/// "1 件のコメント" (Japanese has one form). A key's singular, where the language has one, is `key.one`.
export function counted(count, key) {
  const form = new Intl.PluralRules(lang).select(count);
  return `${count} ${t(form === 'one' && texts[lang][`${key}.one`] ? `${key}.one` : key)}`;
}

/// More texts for a part of the client that loads them itself (the operator console).
export function addTexts(more) {
  for (const [language, entries] of Object.entries(more)) Object.assign(texts[language], entries);
}
export const currentLanguage = () => lang;

export function setLanguage(next) {
  lang = next;
  localStorage.setItem('lang', next);
  document.documentElement.lang = next;
  for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
}

export function formatDate(iso) {
  return new Date(iso).toLocaleString(lang === 'ja' ? 'ja-JP' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

"""Benchmark catalogs: the real MCP corpus plus deterministic synthetic services.

The synthetic part imitates common SaaS/MCP servers (English, and a few with
Chinese descriptions, as Chinese MCP servers publish them). ``scaled(n)``
grows it to any size by numbering service copies, for latency runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hookspecs.types import SkillSpec, ToolSpec  # noqa: E402
from ptc_plus.capabilities import ResourceEntry, ResourceSource  # noqa: E402
from ptc_plus.sdk.tools_file import load_tool_specs  # noqa: E402

DATA = ROOT / "tests" / "data"

# service: (object noun, description of the service, {operation: (verb phrase, extra params)})
_OPS = {
    "list": ("List {obj}s in {svc}", {"limit": {"type": "integer", "description": "Maximum results"}}),
    "get": ("Get one {obj} from {svc} by id", {"id": {"type": "string", "description": "The {obj} id"}}),
    "create": ("Create a new {obj} in {svc}", {"title": {"type": "string"}, "body": {"type": "string"}}),
    "update": ("Update fields of an existing {obj} in {svc}", {"id": {"type": "string"}, "fields": {"type": "object"}}),
    "delete": ("Delete a {obj} from {svc} permanently", {"id": {"type": "string"}}),
    "search": ("Search {obj}s in {svc} by keyword", {"query": {"type": "string", "description": "Search text"}}),
}
SERVICES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "github": ("issue", "GitHub issues", ("list", "get", "create", "update", "search")),
    "github_pr": ("pull_request", "GitHub pull requests", ("list", "get", "create", "update")),
    "gitlab": ("merge_request", "GitLab merge requests", ("list", "get", "create")),
    "jira": ("ticket", "Jira project tracking", ("list", "get", "create", "update", "delete", "search")),
    "linear": ("task", "Linear task tracker", ("list", "create", "update")),
    "slack": ("message", "Slack channels", ("list", "create", "delete", "search")),
    "discord": ("channel", "Discord servers", ("list", "create", "delete")),
    "gmail": ("email", "Gmail mailbox", ("list", "get", "create", "delete", "search")),
    "outlook": ("mail_folder", "Outlook mail folders", ("list", "create")),
    "gcal": ("event", "Google Calendar", ("list", "get", "create", "update", "delete")),
    "notion": ("page", "Notion workspace", ("list", "get", "create", "update", "search")),
    "confluence": ("wiki_page", "Confluence wiki space", ("get", "create", "search")),
    "gdrive": ("drive_file", "Google Drive", ("list", "get", "delete", "search")),
    "dropbox": ("shared_folder", "Dropbox storage", ("list", "create", "delete")),
    "s3": ("bucket_object", "Amazon S3 buckets", ("list", "get", "delete")),
    "postgres": ("table_row", "PostgreSQL database tables", ("list", "get", "create", "update", "delete")),
    "mongodb": ("document", "MongoDB collections", ("get", "create", "delete", "search")),
    "redis": ("cache_key", "Redis key-value cache", ("get", "create", "delete")),
    "elastic": ("index_document", "Elasticsearch indices", ("get", "create", "search")),
    "stripe": ("invoice", "Stripe billing and payments", ("list", "get", "create")),
    "shopify": ("product", "Shopify store catalog", ("list", "get", "create", "update", "delete")),
    "salesforce": ("customer_account", "Salesforce CRM", ("list", "get", "create", "update")),
    "hubspot": ("contact", "HubSpot CRM contacts", ("list", "create", "search")),
    "zendesk": ("support_ticket", "Zendesk customer support", ("list", "get", "update")),
    "kubernetes": ("pod", "Kubernetes cluster", ("list", "get", "delete")),
    "docker": ("container", "Docker engine", ("list", "create", "delete")),
    "aws_ec2": ("instance", "Amazon EC2 virtual machines", ("list", "create", "delete")),
    "vercel": ("deployment", "Vercel hosting deployments", ("list", "get", "create")),
    "sentry_alerts": ("alert_rule", "Sentry alert rules", ("list", "create", "delete")),
    "datadog": ("monitor", "Datadog monitoring", ("list", "get", "create")),
    "openweather": ("forecast", "OpenWeather weather forecast and temperature", ("get", "search")),
    "gmaps": ("place", "Google Maps places and geocoding", ("get", "search")),
    "spotify": ("playlist", "Spotify music playlists", ("list", "create", "search")),
    "youtube": ("video", "YouTube videos and transcripts", ("get", "search")),
    "figma": ("design_file", "Figma design files", ("get", "list")),
    "trello": ("card", "Trello boards", ("list", "create", "update", "delete")),
    "todoist": ("todo", "Todoist personal to-do list and reminders", ("list", "create", "delete")),
    "twilio": ("sms", "Twilio SMS text messaging", ("create", "list")),
    "deepl": ("glossary", "DeepL translation glossaries", ("list", "create")),
    "alpha_vantage": ("stock_quote", "stock market quotes and tickers", ("get", "search")),
    "exchange": ("exchange_rate", "currency exchange rates", ("get", "list")),
    "airtable": ("base_record", "Airtable bases", ("list", "create", "update")),
    "zoom": ("meeting", "Zoom video meetings", ("list", "create", "delete")),
    "pagerduty": ("incident", "PagerDuty on-call incidents", ("list", "get", "update")),
    "hn": ("story", "Hacker News stories", ("list", "get", "search")),
    "asana": ("project_task", "Asana project tasks", ("list", "create", "update", "delete")),
    "bitbucket": ("repository", "Bitbucket code repositories", ("list", "get", "create", "delete")),
    "circleci": ("pipeline", "CircleCI build pipelines", ("list", "get", "create")),
    "grafana": ("dashboard", "Grafana dashboards", ("list", "get", "create", "delete")),
    "okta": ("user_account", "Okta identity users", ("list", "get", "create", "delete")),
    "vault": ("secret", "HashiCorp Vault secrets and passwords", ("get", "create", "delete")),
    "mailchimp": ("campaign", "Mailchimp email campaigns", ("list", "create", "delete")),
    "calendly": ("booking", "Calendly appointment bookings", ("list", "get", "delete")),
    "box": ("file_comment", "Box file comments", ("list", "create", "delete")),
    "quickbooks": ("expense", "QuickBooks accounting expenses", ("list", "create", "update")),
    "intercom": ("conversation", "Intercom customer conversations", ("list", "get", "search")),
    "cloudflare": ("dns_record", "Cloudflare DNS records", ("list", "create", "update", "delete")),
    "pinecone": ("vector", "Pinecone vector index", ("create", "delete", "search")),
    "wordpress": ("blog_post", "WordPress blog posts", ("list", "create", "update", "delete")),
}
# Chinese-language servers, described in Chinese as their authors publish them.
CHINESE_TOOLS: list[tuple[str, str, str, dict[str, object]]] = [
    (
        "mcp:12306",
        "query_tickets",
        "查询12306火车票余票信息，按出发站、到达站和日期筛选车次",
        {"from_station": {"type": "string"}, "to_station": {"type": "string"}, "date": {"type": "string"}},
    ),
    ("mcp:12306", "get_train_route", "获取某个车次的经停站和时刻表", {"train_no": {"type": "string"}}),
    (
        "mcp:amap",
        "route_planning",
        "高德地图路线规划：驾车、步行、公交导航路线",
        {"origin": {"type": "string"}, "destination": {"type": "string"}},
    ),
    ("mcp:amap", "geocode", "把地址转换为经纬度坐标（地理编码）", {"address": {"type": "string"}}),
    ("mcp:amap", "weather_query", "查询城市实时天气和未来几天天气预报", {"city": {"type": "string"}}),
    (
        "mcp:wechat",
        "send_wechat_message",
        "向微信联系人或群聊发送文本消息",
        {"to": {"type": "string"}, "text": {"type": "string"}},
    ),
    ("mcp:dingtalk", "create_approval", "在钉钉发起审批流程", {"template": {"type": "string"}}),
    (
        "mcp:feishu",
        "create_doc",
        "在飞书云文档中新建文档并写入内容",
        {"title": {"type": "string"}, "content": {"type": "string"}},
    ),
    (
        "mcp:feishu",
        "read_sheet",
        "读取飞书电子表格中指定区域的数据",
        {"sheet_token": {"type": "string"}, "range": {"type": "string"}},
    ),
    (
        "mcp:baidu",
        "translate_text",
        "百度翻译：把文本翻译成目标语言",
        {"text": {"type": "string"}, "to": {"type": "string"}},
    ),
    ("mcp:akshare", "stock_history", "获取A股股票的历史行情数据（日K线）", {"symbol": {"type": "string"}}),
    ("mcp:bilibili", "search_videos", "搜索哔哩哔哩视频", {"keyword": {"type": "string"}}),
    (
        "mcp:ctrip",
        "search_hotels",
        "携程酒店搜索：按城市和入住日期查找酒店",
        {"city": {"type": "string"}, "check_in": {"type": "string"}},
    ),
    (
        "mcp:ctrip",
        "search_flights",
        "查询国内航班和机票价格",
        {"from_city": {"type": "string"}, "to_city": {"type": "string"}},
    ),
    ("mcp:express", "track_package", "查询快递物流轨迹（顺丰、中通等）", {"tracking_no": {"type": "string"}}),
]
SKILLS = [
    SkillSpec(name="pdf", description="Fill in, merge and extract text from PDF documents."),
    SkillSpec(name="pptx", description="Create and edit PowerPoint presentation slides."),
    SkillSpec(name="docx", description="Write and review Word documents with tracked changes."),
    SkillSpec(name="brand-guidelines", description="Apply the company's brand colours and typography to artifacts."),
    SkillSpec(name="data-analysis", description="Explore a CSV data set and summarise it with charts."),
    SkillSpec(name="code-review", description="Review a diff for bugs, style and security problems."),
    SkillSpec(name="release-notes", description="Draft release notes from merged pull requests."),
    SkillSpec(name="周报", description="根据本周的提交和任务自动生成工作周报。"),
]
RESOURCES = [
    ResourceSource(
        server="sqlite",
        entries=(
            ResourceEntry(
                name="Business Insights Memo",
                uri="memo://insights",
                description="A memo of discovered business insights",
            ),
        ),
    ),
    ResourceSource(
        server="docs",
        entries=(
            ResourceEntry(
                name="Product handbook page",
                uri_template="docs://handbook/{page}",
                description="Read a page of the product handbook",
            ),
        ),
    ),
]


def real_tools() -> list[ToolSpec]:
    """The real-world corpus dumped from MCP servers (tests/data/mcp)."""
    return [spec for path in sorted((DATA / "mcp").glob("*.json")) for spec in load_tool_specs(path)]


def synthetic_tools(copy: int = 0) -> list[ToolSpec]:
    """The synthetic services; ``copy`` > 0 numbers them for scaled catalogs."""
    specs: list[ToolSpec] = []
    suffix = f"{copy}" if copy else ""
    for svc, (obj, what, ops) in SERVICES.items():
        for op in ops:
            phrase, params = _OPS[op]
            props = {
                k: {kk: (vv.format(obj=obj.replace("_", " ")) if isinstance(vv, str) else vv) for kk, vv in v.items()}
                for k, v in params.items()
            }
            required = [k for k in props if k in ("id", "query", "title")]
            specs.append(
                ToolSpec(
                    name=f"{op}_{obj}s" if op in ("list", "search") else f"{op}_{obj}",
                    description=phrase.format(obj=obj.replace("_", " "), svc=what) + ".",
                    input_schema={"type": "object", "properties": props, "required": required},
                    output_schema={
                        "type": "object",
                        "properties": {"ok": {"type": "boolean"}, "data": {"type": "object"}},
                    },
                    source=f"mcp:{svc}{suffix}",
                )
            )
    for source, name, description, props in CHINESE_TOOLS:
        specs.append(
            ToolSpec(
                name=name,
                description=description,
                input_schema={"type": "object", "properties": props, "required": sorted(props)},
                source=source + suffix,
            )
        )
    return specs


def demo_tools() -> list[ToolSpec]:
    """The reference host's demo tools (files, notes, units); nothing is created until a tool runs."""
    from hookspecs.reference.demo_tools import demo_tool_definitions

    return [d.spec for d in demo_tool_definitions(Path("/nonexistent-workspace"))]


def benchmark_catalog_parts() -> tuple[list[ToolSpec], list[SkillSpec], list[ResourceSource]]:
    """Tools, skills and resource sources of the search-quality catalog (≥ 300 capabilities)."""
    return real_tools() + demo_tools() + synthetic_tools(), list(SKILLS), list(RESOURCES)


def scaled_tools(count: int) -> list[ToolSpec]:
    """Exactly ``count`` tools: the real corpus, then numbered synthetic copies."""
    specs = real_tools() + synthetic_tools()
    copy = 1
    while len(specs) < count:
        specs += synthetic_tools(copy)
        copy += 1
    return specs[:count]
